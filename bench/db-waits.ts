// `bench:ocpp --db-waits`: what the gateway's statements waited for in PostgreSQL, sampled from pg_stat_activity every
// 100 ms in the benchmark's own process (its own connection; the gateway's CPU is not touched). An ack that takes
// hundreds of milliseconds while the gateway's event loop is free is waiting for the database: this names for what
// (the WAL flush of a commit, a lock, a page read), or shows the database waiting for the gateway instead (a
// transaction open and idle while the gateway is busy). It also reads the server's WAL counters (pg_stat_wal) each
// time: how much WAL a window wrote, per MeterValues, and how much of it full-page images after a checkpoint, which
// is what a commit's flush has to write; and, where the server runs on this machine, the CPU of its processes
// (/proc), which on two cores shared with the gateway is CPU the gateway does not get.
import fs from 'node:fs';
import pg from 'pg';

export interface WaitSample {
  /** epoch ms of the sample */
  at: number;
  /** what the backend was doing: its wait event (e.g. IO/WALSync), `running`, or `idle in transaction` */
  kind: string;
  /** how long it had been at it: the statement's age, or for an idle transaction the time since its last statement */
  ms: number;
}

export interface ActivityRow {
  state: string | null;
  wait_event_type: string | null;
  wait_event: string | null;
  query_ms: number | null;
  idle_ms: number | null;
}

/** One pg_stat_activity row of the gateway's database as a sample, or null when the backend is idle. */
export function sampleOf(at: number, row: ActivityRow): WaitSample | null {
  if (row.state === 'idle in transaction' || row.state === 'idle in transaction (aborted)') return { at, kind: 'idle in transaction', ms: row.idle_ms ?? 0 };
  if (row.state !== 'active') return null;
  const kind = row.wait_event_type ? `${row.wait_event_type}/${row.wait_event ?? '?'}` : 'running';
  return { at, kind, ms: row.query_ms ?? 0 };
}

export interface WaitSummary {
  kind: string;
  /** sampling moments at which some backend had been in this state for at least the threshold */
  samples: number;
  longest_ms: number;
}

/** The waits of at least `overMs` between `from` and `to` (epoch ms), by kind, the longest first. */
export function summariseWaits(samples: WaitSample[], from: number, to: number, overMs: number): WaitSummary[] {
  const byKind = new Map<string, { moments: Set<number>; longest: number }>();
  for (const s of samples) {
    if (s.at < from || s.at > to || s.ms < overMs) continue;
    const k = byKind.get(s.kind) ?? { moments: new Set<number>(), longest: 0 };
    k.moments.add(s.at);
    k.longest = Math.max(k.longest, s.ms);
    byKind.set(s.kind, k);
  }
  return [...byKind]
    .map(([kind, k]) => ({ kind, samples: k.moments.size, longest_ms: Math.round(k.longest) }))
    .sort((x, y) => y.longest_ms - x.longest_ms || y.samples - x.samples);
}

/** The summary as one line for the report. */
export function formatWaits(w: WaitSummary[], overMs: number): string {
  if (w.length === 0) return `none over ${overMs} ms`;
  return w.map((x) => `${x.kind === 'idle in transaction' ? 'an open transaction waiting for the gateway' : x.kind} at ${x.samples} sample(s), longest ${x.longest_ms} ms`).join('; ');
}

/** The server's WAL counters at one moment (pg_stat_wal, pg_stat_bgwriter): cluster-wide, so every database's writes. */
export interface WalSample {
  at: number;
  records: number;
  /** full-page images: the first change of a page after a checkpoint writes the whole page into the WAL */
  fpi: number;
  bytes: number;
  /** WAL flushes to disk (the fsync a commit waits for, or the WAL writer's) */
  syncs: number;
  checkpoints: number;
}

export interface WalDelta {
  seconds: number;
  bytes: number;
  records: number;
  fpi: number;
  syncs: number;
  checkpoints: number;
}

/** What the WAL counters grew by between the first sample at or after `from` and the last one at or before `to`. */
export function walBetween(samples: WalSample[], from: number, to: number): WalDelta | null {
  const inside = samples.filter((s) => s.at >= from && s.at <= to);
  if (inside.length < 2) return null;
  const a = inside[0]!;
  const b = inside[inside.length - 1]!;
  return {
    seconds: (b.at - a.at) / 1000,
    bytes: b.bytes - a.bytes,
    records: b.records - a.records,
    fpi: b.fpi - a.fpi,
    syncs: b.syncs - a.syncs,
    checkpoints: b.checkpoints - a.checkpoints,
  };
}

/** The WAL of a window as one line for the report, per unit of work (e.g. per MeterValues acknowledged in it). */
export function formatWal(w: WalDelta | null, units: number, unit: string): string {
  if (!w) return 'not sampled';
  const per = units > 0 ? `${Math.round(w.bytes / units).toLocaleString('en')} bytes per ${unit}, ` : '';
  const fpiShare = w.records > 0 ? ((100 * w.fpi) / w.records).toFixed(1) : '0.0';
  return (
    `${(w.bytes / 1048576).toFixed(1)} MB in ${w.seconds.toFixed(1)} s (${per}${w.records.toLocaleString('en')} records, ` +
    `${fpiShare} % of them full-page images), ${w.syncs.toLocaleString('en')} flushes, ${w.checkpoints} checkpoint(s)`
  );
}

/** The update counters of one table of the gateway's database (pg_stat_user_tables) at one moment. */
export interface TableSample {
  at: number;
  updates: number;
  /** heap-only (HOT) updates: the new row version on the same page and no index entry written */
  hot: number;
}

/** A table's updates between the first sample at or after `from` and the last one at or before `to`. */
export function tableUpdatesBetween(samples: TableSample[], from: number, to: number): { updates: number; hot: number } | null {
  const inside = samples.filter((s) => s.at >= from && s.at <= to);
  if (inside.length < 2) return null;
  const a = inside[0]!;
  const b = inside[inside.length - 1]!;
  return { updates: b.updates - a.updates, hot: b.hot - a.hot };
}

/** The updates of a window as one line for the report, per unit of work. */
export function formatTableUpdates(t: { updates: number; hot: number } | null, units: number, unit: string): string {
  if (!t) return 'not sampled';
  const share = t.updates > 0 ? ((100 * t.hot) / t.updates).toFixed(1) : '0.0';
  const per = units > 0 ? ` (${(t.updates / units).toFixed(2)} per ${unit})` : '';
  return `${t.updates.toLocaleString('en')} updates${per}, ${t.hot.toLocaleString('en')} of them heap-only (${share} %)`;
}

/** The CPU of the PostgreSQL server's processes at one moment, by pid (clock ticks, user + system), from /proc. */
export interface ServerCpuSample {
  at: number;
  ticks: Map<number, number>;
}

/** The CPU ticks of every process named `postgres` on this machine (empty where there is no /proc or no such process). */
export function readServerCpu(at: number, proc = '/proc'): ServerCpuSample {
  const ticks = new Map<number, number>();
  let entries: string[];
  try {
    entries = fs.readdirSync(proc);
  } catch {
    return { at, ticks };
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`${proc}/${e}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    if (stat.slice(open + 1, close) !== 'postgres') continue;
    const f = stat.slice(close + 2).split(' ');
    ticks.set(Number(e), Number(f[11]) + Number(f[12])); // utime, stime, in USER_HZ ticks (100 a second on Linux)
  }
  return { at, ticks };
}

/**
 * The server's CPU seconds between the first sample at or after `from` and the last one at or before `to`: for each
 * process its growth from the first sample that saw it (a process started inside the window counts whole, as a
 * new backend does); a process that ended between two samples loses what it did since the last one. Null when
 * fewer than two samples fall inside or none saw a postgres process (a server on another machine).
 */
export function serverCpuBetween(samples: ServerCpuSample[], from: number, to: number, ticksPerSecond = 100): { seconds: number; cpu_s: number } | null {
  const inside = samples.filter((s) => s.at >= from && s.at <= to);
  if (inside.length < 2 || inside.every((s) => s.ticks.size === 0)) return null;
  const firstSeen = new Map<number, number>();
  const lastSeen = new Map<number, number>();
  inside.forEach((s, k) => {
    for (const [pid, t] of s.ticks) {
      if (!firstSeen.has(pid)) firstSeen.set(pid, k === 0 ? t : 0);
      lastSeen.set(pid, t);
    }
  });
  let ticks = 0;
  for (const [pid, t] of lastSeen) ticks += t - firstSeen.get(pid)!;
  return { seconds: (inside[inside.length - 1]!.at - inside[0]!.at) / 1000, cpu_s: ticks / ticksPerSecond };
}

/** Samples the activity of one database (and the server's WAL counters) until stopped. */
export class DbWaitSampler {
  readonly samples: WaitSample[] = [];
  readonly wal: WalSample[] = [];
  /** the PostgreSQL processes' CPU, when the server runs on this machine */
  readonly serverCpu: ServerCpuSample[] = [];
  /** charging_sessions' update counters, read in the gateway's own database about once a second */
  readonly sessionUpdates: TableSample[] = [];
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly url: string,
    private readonly database: string,
    private readonly everyMs = 100,
  ) {}

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'bench-db-waits' });
    await client.connect();
    // pg_stat_user_tables is per database: a second connection to the gateway's (statistics reach it within a second)
    const own = new URL(this.url);
    own.pathname = `/${this.database}`;
    const local = new pg.Client({ connectionString: own.toString(), application_name: 'bench-db-waits' });
    await local.connect();
    let tablesAt = 0;
    this.loop = (async () => {
      try {
        while (!this.stopped) {
          if (Date.now() - tablesAt >= 1000) {
            tablesAt = Date.now();
            const t = await local.query<{ upd: string; hot: string }>(
              `select n_tup_upd::text as upd, n_tup_hot_upd::text as hot from pg_stat_user_tables where relname = 'charging_sessions'`,
            );
            const r0 = t.rows[0];
            if (r0) this.sessionUpdates.push({ at: Date.now(), updates: Number(r0.upd), hot: Number(r0.hot) });
          }
          const r = await client.query<ActivityRow>(
            `select state, wait_event_type, wait_event,
                    extract(epoch from clock_timestamp() - query_start) * 1000 as query_ms,
                    extract(epoch from clock_timestamp() - state_change) * 1000 as idle_ms
               from pg_stat_activity
              where datname = $1 and pid <> pg_backend_pid() and backend_type = 'client backend'`,
            [this.database],
          );
          const at = Date.now();
          for (const row of r.rows) {
            const s = sampleOf(at, { ...row, query_ms: row.query_ms === null ? null : Number(row.query_ms), idle_ms: row.idle_ms === null ? null : Number(row.idle_ms) });
            if (s) this.samples.push(s);
          }
          const w = await client.query<{ records: string; fpi: string; bytes: string; syncs: string; checkpoints: string }>(
            `select wal_records::text as records, wal_fpi::text as fpi, wal_bytes::text as bytes, wal_sync::text as syncs,
                    (select (checkpoints_timed + checkpoints_req)::text from pg_stat_bgwriter) as checkpoints
               from pg_stat_wal`,
          );
          const c = w.rows[0];
          if (c) this.wal.push({ at: Date.now(), records: Number(c.records), fpi: Number(c.fpi), bytes: Number(c.bytes), syncs: Number(c.syncs), checkpoints: Number(c.checkpoints) });
          this.serverCpu.push(readServerCpu(Date.now()));
          await new Promise((resolve) => setTimeout(resolve, this.everyMs));
        }
      } catch {
        // the database was dropped under the sampler at the end of the run: what was sampled stands
      } finally {
        await client.end().catch(() => {});
        await local.end().catch(() => {});
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}
