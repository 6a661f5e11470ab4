// Ids announced on one bus topic (src/db/bus.ts), coalesced: the ids added within WINDOW_MS of the first one go out
// together, in as few notifications as fit NOTIFY's payload. Used where every commit names a few chargers (the
// live views that changed, the connections recorded) and one NOTIFY per commit would cost as many statements as
// the commits themselves.
import type { Logger } from 'pino';
import type { Bus, BusPayload } from './bus.ts';
import type { Db } from './database.ts';
import { throttledLog } from '../lib/throttled-log.ts';

export const WINDOW_MS = 100;
/** NOTIFY's limit is 8000 bytes; a uuid with its JSON quotes and comma is 39 */
const PAYLOAD_BYTES = 7_800;

export class CoalescedIds {
  private pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private readonly perEvent: number;

  constructor(
    private readonly target: { db: Db; bus: Bus; logger: Logger },
    private readonly topic: string,
    /** fields every event carries besides the ids (e.g. the sending process) */
    private readonly fields: BusPayload = {},
  ) {
    this.perEvent = Math.floor((PAYLOAD_BYTES - JSON.stringify(fields).length) / 39);
  }

  /** Never throws; a lost event is left to the subscribers' periodic re-read. */
  add(ids: Iterable<string>): void {
    for (const id of ids) this.pending.add(id);
    this.timer ??= setTimeout(() => void this.flush(), WINDOW_MS);
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
  }

  private async flush(): Promise<void> {
    const ids = [...this.pending];
    this.pending = new Set();
    this.timer = undefined;
    const { db, bus, logger } = this.target;
    for (let i = 0; i < ids.length; i += this.perEvent) {
      try {
        await bus.publish(db, this.topic, { ...this.fields, ids: ids.slice(i, i + this.perEvent) });
      } catch (err) {
        // D224: during an outage every flush fails: once a minute, with a count of the rest (D222's throttle)
        throttledLog(logger).event('warn', 'bus.publish_failed', { err, topic: this.topic, ids: ids.length }, 'bus: could not publish');
      }
    }
  }
}

/** The ids of an event published through CoalescedIds (anything else in it is ignored). */
export function idsOf(payload: BusPayload): string[] {
  const ids = payload.ids;
  return Array.isArray(ids) ? ids.filter((x): x is string => typeof x === 'string') : [];
}
