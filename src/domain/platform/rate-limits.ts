// C1.5 rate-limit counters in PostgreSQL (TOOLCHAIN.md §4): one row per key, one atomic upsert per request,
// so every process that shares the database shares the count. Fixed windows, timed by the database clock.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';

export interface RateLimitHit {
  /** requests counted in the current window, this one included */
  current: number;
  /** milliseconds until the window resets */
  ttl: number;
}

export async function hitRateLimit(db: Db, key: string, windowMs: number): Promise<RateLimitHit> {
  // A row whose window has passed starts a new window at 1; otherwise the count goes up by one.
  const r = await sql<{ count: number; ttl: number }>`
    insert into rate_limits as rl (key, count, window_start, window_ms)
    values (${key}, 1, now(), ${windowMs})
    on conflict (key) do update set
      count = case when rl.window_start + rl.window_ms * interval '1 millisecond' <= now() then 1 else rl.count + 1 end,
      window_start = case when rl.window_start + rl.window_ms * interval '1 millisecond' <= now() then now() else rl.window_start end,
      window_ms = excluded.window_ms
    returning count,
      greatest(0, ceil(extract(epoch from (window_start + window_ms * interval '1 millisecond' - now())) * 1000))::integer as ttl`.execute(db);
  const row = r.rows[0]!;
  return { current: Number(row.count), ttl: Number(row.ttl) };
}

/** Current count without counting (the store's read(), used for `{ increment: false }`). */
export async function readRateLimit(db: Db, key: string): Promise<RateLimitHit> {
  const r = await sql<{ count: number; ttl: number }>`
    select case when window_start + window_ms * interval '1 millisecond' <= now() then 0 else count end as count,
      greatest(0, ceil(extract(epoch from (window_start + window_ms * interval '1 millisecond' - now())) * 1000))::integer as ttl
    from rate_limits where key = ${key}`.execute(db);
  const row = r.rows[0];
  return row ? { current: Number(row.count), ttl: Number(row.ttl) } : { current: 0, ttl: 0 };
}

/** Deletes counters whose window ended more than a minute ago (the rate-limit-cleanup job). */
export async function deleteExpiredRateLimits(db: Db): Promise<{ deleted: number }> {
  const r = await sql`
    delete from rate_limits
    where window_start + window_ms * interval '1 millisecond' < now() - interval '1 minute'`.execute(db);
  return { deleted: Number(r.numAffectedRows ?? 0) };
}
