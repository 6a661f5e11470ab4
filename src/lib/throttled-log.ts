// D222: a trouble that repeats for every message is logged once a minute per process, with a count of the rest.
// During a database outage each charger message wrote a warn line for every retry of its transaction (about three per
// message, with the stack) and an error line when it was refused, and the command poll a warn line every second: at a
// fleet's rate thousands of lines a second, the same line each time, burying the one that said what happened. The
// first occurrence of an event in an interval is logged at once, with its fields; later ones are only counted, and
// when the interval ends one line says how many were not logged (`suppressed`), so the log still shows how long the
// trouble lasted and how much it touched. Keyed by the event name only (a fixed set in the code): memory stays bounded.
// The refused OCPP upgrades (D219, ocpp/refusal-log.ts) use the same throttle keyed by reason and identity. D224: the
// lease renewal and the event bus's warnings go through it too, and `suppressedTotal` lets the `db.recovered` line
// (db/health.ts) say how many lines an outage kept out of the log.
import type { Logger } from 'pino';

export const THROTTLE_INTERVAL_MS = 60_000;

type Level = 'warn' | 'error';

/** A log line: its level, its fields (with its `event`) and its message. */
export interface LogLine {
  level: Level;
  fields: Record<string, unknown>;
  msg: string;
}

interface Pending {
  /** the line that ends the interval, given how many were not logged */
  closing: (suppressed: number) => LogLine;
  suppressed: number;
}

/**
 * Logs the first line of each key in an interval and counts the rest; the interval's end writes each repeated key's
 * closing line. At most `maxKeys` keys are remembered in an interval: a newcomer past that shares its caller's
 * overflow key (D219: a flood of distinct identities), so memory and lines stay bounded.
 */
export class ThrottledLog {
  private seen = new Map<string, Pending>();
  private suppressedCount = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly logger: Logger,
    readonly intervalMs = THROTTLE_INTERVAL_MS,
    private readonly maxKeys = Infinity,
  ) {
    this.timer = setInterval(() => this.flush(), intervalMs);
    this.timer.unref();
  }

  /** the keys remembered in this interval */
  get keys(): number {
    return this.seen.size;
  }

  /** lines counted instead of logged since this throttle began (never reset: readers take differences) */
  get suppressedTotal(): number {
    return this.suppressedCount;
  }

  /** Logs `line` if `key` is the first of its kind in this interval; else counts it. */
  log(key: string, line: LogLine, closing: Pending['closing'], overflow?: { key: string; closing: Pending['closing'] }): void {
    if (!this.seen.has(key) && this.seen.size >= this.maxKeys && overflow) ({ key, closing } = overflow);
    const pending = this.seen.get(key);
    if (pending) {
      pending.suppressed++;
      this.suppressedCount++;
      return;
    }
    this.seen.set(key, { closing, suppressed: 0 });
    this.logger[line.level](line.fields, line.msg);
  }

  /** An event keyed by its name (D222): its closing line has the event and `suppressed`, and says so in its message. */
  event(level: Level, event: string, fields: Record<string, unknown>, msg: string): void {
    this.log(event, { level, fields: { ...fields, event }, msg }, (n) => ({
      level,
      fields: { event, suppressed: n },
      msg: `${msg} (${n} more in the last interval, not logged one by one)`,
    }));
  }

  /** Ends the interval: one closing line per key that repeated, then every key is forgotten. */
  flush(): void {
    const ended = this.seen;
    this.seen = new Map();
    for (const p of ended.values()) {
      if (p.suppressed === 0) continue;
      const l = p.closing(p.suppressed);
      this.logger[l.level](l.fields, l.msg);
    }
  }

  /** At shutdown: what was not logged yet is told, and the timer stops. */
  close(): void {
    clearInterval(this.timer);
    this.flush();
  }
}

const perLogger = new WeakMap<Logger, ThrottledLog>();

/** The process's throttled log over `logger` (one per logger, so one per service instance). */
export function throttledLog(logger: Logger): ThrottledLog {
  let t = perLogger.get(logger);
  if (!t) perLogger.set(logger, (t = new ThrottledLog(logger)));
  return t;
}
