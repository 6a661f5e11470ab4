// The ingest path's batch statements as named prepared statements on PostgreSQL (D82). A batch statement is long
// (a dozen CTEs over the partitioned readings) and runs for every batch: sent unnamed, PostgreSQL parses, analyses
// and plans it each time, 0.7 ms of its CPU a batch. Named, it is parsed once per connection, and after five
// executions PostgreSQL may keep a generic plan and plan it no more. A statement opts in by starting with
// PREPARED; its name is a hash of its text, so a text is prepared once per connection and two texts never share a
// name. Its text must not vary with the batch (a batch's sizes go as parameters: batch-rows.ts rowCount), or a
// connection would hold one prepared statement per size.
//
// node-postgres keeps the names a connection has prepared and sends only Bind/Execute for a known one.
// DB_PREPARED_STATEMENTS=false sends them unnamed (behind a pooler that cannot keep prepared statements per client
// connection, such as PgBouncer in transaction mode before 1.21). PGlite ignores the mark: there is no network
// round trip, and the comment is only a comment.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';

/** The first words of a statement to be prepared (a comment: harmless wherever it is not recognised). */
export const PREPARED_MARK = '/* prepared */';
export const PREPARED = sql.raw(PREPARED_MARK);

/** The name a marked text is prepared under. */
export const preparedName = (text: string): string => `ere_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;

/** A pg client that runs marked statements (text and values, as Kysely sends them) as named prepared statements. */
export class PreparingClient extends pg.Client {
  private readonly names = new Map<string, string>();

  // pg's overloads (text, config, submittable; promise or callback) pass through; only (text[, values]) is named
  override query(...args: any[]): any {
    const [text, values] = args as unknown[];
    if (typeof text === 'string' && text.startsWith(PREPARED_MARK) && (values === undefined || Array.isArray(values)) && args.length <= 2) {
      let name = this.names.get(text);
      if (name === undefined) this.names.set(text, (name = preparedName(text)));
      return super.query({ name, text, values: values as unknown[] | undefined });
    }
    return (super.query as (...a: unknown[]) => unknown)(...args);
  }
}
