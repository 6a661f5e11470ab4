// `npm run bench:batch -- [--items 1000] [--runs 5]`
//
// POST /v1/sessions:batch on PostgreSQL (DATABASE_URL required), timed where its cost lies: the domain call
// recordSessionsBatch on the service's own database, in-process. A fresh database holds one CPO partner with
// --items / 10 accounts per run (a third named by cpo_external_ref); each run posts --items items for new
// (connection, month) pairs in the months 2026-01 … 2026-10, then the same items again (a replay). Prints p50/max per kind and the statements per request (counted by a kysely plugin).
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { recordSessionsBatch } from '../src/domain/energy/sessions-batch.ts';
import { anAccountWithConnection } from '../test/helpers/energy-factories.ts';
import { aPartner } from '../test/helpers/factories.ts';
import { runBench, withBenchService } from './bench-service.ts';

const { values: a } = parseArgs({ options: { items: { type: 'string', default: '1000' }, runs: { type: 'string', default: '5' } } });
const base = process.env.DATABASE_URL;
if (!base) {
  process.stderr.write('bench:batch needs DATABASE_URL (PostgreSQL)\n');
  process.exit(2);
}

async function main(): Promise<void> {
  await withBenchService(base!, 'batch', async (deps) => {
    const cpo = await aPartner(deps);
    const count = Number(a.items);
    // months before the first compliance year are refused: each run its own connections, ten months each
    const accounts = Math.max(1, Math.ceil(count / 10));
    const connectionsOf = async (run: number) => {
      const conns: string[] = [];
      const refs: string[] = [];
      for (let i = 0; i < accounts; i++) {
        const acc = await anAccountWithConnection(deps, { partnerId: cpo.partnerId });
        const ref = `BENCH-${run}-${i}`;
        await deps.db.updateTable('accounts').set({ cpo_external_ref: ref }).where('id', '=', acc.accountId).execute();
        conns.push(acc.connectionId);
        refs.push(ref);
      }
      return { conns, refs };
    };
    let statements = 0;
    const db = deps.db.withPlugin({
      transformQuery: (args) => {
        statements += 1;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const timed = async (items: unknown[]) => {
      statements = 0;
      const t0 = performance.now();
      const r = await recordSessionsBatch({ ...deps, db }, cpo.partnerId, items);
      return { ms: performance.now() - t0, statements, counts: r.counts };
    };
    const fresh: number[] = [];
    const replay: number[] = [];
    let stmts = { fresh: 0, replay: 0 };
    for (let run = 0; run < Number(a.runs); run++) {
      // each run its own connections, so the first post creates every item
      const { conns, refs } = await connectionsOf(run);
      const items = Array.from({ length: count }, (_, i) => {
        const c = i % conns.length;
        const m = Math.floor(i / conns.length); // 0 … 9: a distinct (connection, month) per item
        const month = `2026-${String(m + 1).padStart(2, '0')}`;
        return i % 3 === 0 ? { cpo_external_ref: refs[c], month, kwh: 10 + (i % 7) } : { connection_id: conns[c], month, kwh: 10 + (i % 7) };
      });
      const f = await timed(items);
      const r = await timed(items);
      fresh.push(f.ms);
      replay.push(r.ms);
      stmts = { fresh: f.statements, replay: r.statements };
      if (run === 0) process.stdout.write(`first run: new ${JSON.stringify(f.counts)}, replay ${JSON.stringify(r.counts)}\n`);
    }
    const p50 = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const f1 = (v: number) => v.toFixed(1);
    process.stdout.write(
      `POST /v1/sessions:batch, ${count} items, ${a.runs} runs (PostgreSQL ${(await sql<{ server_version: string }>`show server_version`.execute(deps.db)).rows[0]!.server_version}):\n` +
        `  new months: p50 ${f1(p50(fresh))} ms, max ${f1(Math.max(...fresh))} ms, ${stmts.fresh} statements\n` +
        `  replay:     p50 ${f1(p50(replay))} ms, max ${f1(Math.max(...replay))} ms, ${stmts.replay} statements\n`,
    );
  });
}

runBench('bench:batch', main);
