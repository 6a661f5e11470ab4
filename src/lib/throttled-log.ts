// D222: a trouble that repeats for every message is logged once a minute per process, with a count of the rest.
// During a database outage each charger message wrote a warn line for every retry of its transaction (about three per
// message, with the stack) and an error line when it was refused, and the command poll a warn line every second: at a
// fleet's rate thousands of lines a second, the same line each time, burying the one that said what happened. The
// first occurrence of an event in an interval is logged at once, with its fields; later ones are only counted, and
// when the interval ends one line says how many were not logged (`suppressed`), so the log still shows how long the
// trouble lasted and how much it touched. Keyed by the event name only (a fixed set in the code): memory stays bounded.
import type { Logger } from 'pino';

export const THROTTLE_INTERVAL_MS = 60_000;

type Level = 'warn' | 'error';

interface Pending {
  level: Level;
  msg: string;
  suppressed: number;
}

export class ThrottledLog {
  private readonly seen = new Map<string, Pending>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly logger: Logger,
    intervalMs = THROTTLE_INTERVAL_MS,
  ) {
    this.timer = setInterval(() => this.flush(), intervalMs);
    this.timer.unref();
  }

  /** Logs `event` with `fields` if it is the first of its name in this interval; else counts it. */
  log(level: Level, event: string, fields: Record<string, unknown>, msg: string): void {
    const pending = this.seen.get(event);
    if (pending) {
      pending.suppressed++;
      return;
    }
    this.seen.set(event, { level, msg, suppressed: 0 });
    this.logger[level]({ ...fields, event }, msg);
  }

  /** Ends the interval: one line per event that repeated, with how many were not logged. */
  flush(): void {
    for (const [event, p] of this.seen) {
      if (p.suppressed > 0) this.logger[p.level]({ event, suppressed: p.suppressed }, `${p.msg} (${p.suppressed} more in the last interval, not logged one by one)`);
    }
    this.seen.clear();
  }

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
