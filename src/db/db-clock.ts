// D250: one clock for every process, PostgreSQL's. The service's decisions that span processes compare a time one
// process wrote with a time another reads: a charger's last_seen_at (written by the process holding its socket, judged
// online by the one serving a request), a token's or a sign-in link's expiry, a command's age, a reading "from the
// future", a job's last run. Each process took its own machine's clock (deps.clock()), so machines whose clocks drifted
// (NTP not running, a resumed VM) disagreed: at 5–10 minutes a connected charger read offline through the other
// process and its commands answered 409, correct readings were held as future_timestamp, and a token minted on a
// process an hour behind was refused by the others at once. The leases and the rate limits already used now().
//
// Rather than move every comparison into SQL, each process on PostgreSQL measures how far its clock is from the
// database's (clock_timestamp() against the middle of the round trip) at start and every minute, and its clock is the
// machine's corrected by that offset: every process then tells the time of one clock, the database's, to within a
// round trip. `clock_offset_seconds` on /metrics shows each process's offset (the largest across workers), and one
// warning line says when a machine is more than a second off (fix its NTP). Durations (Date.now() differences,
// timers) stay on the machine's monotonic time. Embedded PGlite runs in this process: its clock is the machine's.
import type { Logger } from 'pino';
import { sql } from 'kysely';
import { Gauge, type Registry } from 'prom-client';
import type { Db } from './database.ts';

/** how often the offset is measured again (a drifting clock moves a few ms a minute) */
export const CLOCK_SAMPLE_MS = 60_000;
/** a machine this far off PostgreSQL is told about (once, and again when it was back within it) */
export const CLOCK_WARN_OFFSET_MS = 1_000;
/** a measurement whose round trip took longer than this says too little about the offset, and is not taken */
const MAX_RTT_MS = 1_000;

export interface DbClock {
  /** the database's time now: the machine's corrected by the last measured offset */
  now(): Date;
  /** the last measured offset (database − machine), in ms */
  offsetMs(): number;
  /** measures the offset now; false when the database did not answer (the last offset stays) */
  sample(): Promise<boolean>;
  stop(): void;
}

export interface DbClockOptions {
  db: Db;
  logger: Logger;
  metrics?: Registry | undefined;
  /** the machine's clock (tests give one that is off) */
  machineNow?: () => number;
  sampleMs?: number;
}

export function createDbClock(opts: DbClockOptions): DbClock {
  const machineNow = opts.machineNow ?? Date.now;
  let offset = 0;
  let warned = false;
  const gauge = opts.metrics
    ? new Gauge({
        name: 'clock_offset_seconds',
        help: "How far PostgreSQL's clock is ahead of this machine's (negative: behind), measured every minute; the service tells time by PostgreSQL's (D250). With WORKERS above 1, the largest",
        aggregator: 'max',
        registers: [opts.metrics],
      })
    : undefined;
  const sample = async (): Promise<boolean> => {
    try {
      const sent = machineNow();
      const { rows } = await sql<{ ms: string }>`select (extract(epoch from clock_timestamp()) * 1000)::bigint::text as ms`.execute(opts.db);
      const back = machineNow();
      if (back - sent > MAX_RTT_MS || !rows[0]) return false;
      offset = Number(rows[0].ms) - (sent + back) / 2;
      gauge?.set(offset / 1000);
      const far = Math.abs(offset) > CLOCK_WARN_OFFSET_MS;
      if (far && !warned) {
        opts.logger.warn(
          { event: 'clock.offset', offsetMs: Math.round(offset) },
          `this machine's clock is ${(Math.abs(offset) / 1000).toFixed(1)} s ${offset > 0 ? 'behind' : 'ahead of'} PostgreSQL's; the service tells time by PostgreSQL's, but fix the machine's time synchronisation (NTP)`,
        );
      }
      warned = far;
      return true;
    } catch {
      return false; // the database is away: the outage is logged by whoever needs it (the lease, D224)
    }
  };
  const timer = setInterval(() => void sample(), opts.sampleMs ?? CLOCK_SAMPLE_MS);
  timer.unref();
  return {
    now: () => new Date(machineNow() + offset),
    offsetMs: () => offset,
    sample,
    stop: () => clearInterval(timer),
  };
}
