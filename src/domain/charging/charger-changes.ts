// C7.1: "this charger's live view changed" on the event bus (src/db/bus.ts), for the push streams of every
// process (GET /chargers/stream). Published after the commit that made the change (an OCPP message applied, a
// socket connected or closed, an operator's review decision), so a reader that re-reads the charger sees it.
//
// The event carries charger ids only: the streams read the item itself from PostgreSQL (the same query as
// GET /chargers). The ids published within PUBLISH_WINDOW_MS of the first one go out together, as few
// notifications as fit NOTIFY's 8000-byte payload: at a steady fleet rate each batch commits alone, and one NOTIFY
// per batch would cost as many statements as the batches themselves. A stream reads at most every 200 ms anyway.
import type { Bus } from '../../db/bus.ts';
import type { Deps } from '../../deps.ts';

export const CHARGER_CHANGED = 'charger_changed';

/** ids per notification: a uuid and its JSON quotes and comma are 39 bytes, 180 of them stay under 7,900 */
const IDS_PER_EVENT = 180;
/** how long the ids of later commits may join the first one's notification */
export const PUBLISH_WINDOW_MS = 100;

const pending = new WeakMap<Bus, { deps: Deps; ids: Set<string> }>();

/** Marks the chargers changed; the bus event follows within PUBLISH_WINDOW_MS. Never throws. */
export function publishChargerChanges(deps: Deps, chargerIds: Iterable<string>): void {
  const bus = deps.bus;
  if (!bus) return;
  let p = pending.get(bus);
  if (!p) {
    const fresh = { deps, ids: new Set<string>() };
    pending.set(bus, fresh);
    p = fresh;
    setTimeout(() => {
      pending.delete(bus);
      void flush(bus, fresh.deps, [...fresh.ids]);
    }, PUBLISH_WINDOW_MS);
  }
  for (const id of chargerIds) p.ids.add(id);
}

async function flush(bus: Bus, deps: Deps, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += IDS_PER_EVENT) {
    try {
      await bus.publish(deps.db, CHARGER_CHANGED, { ids: ids.slice(i, i + IDS_PER_EVENT) });
    } catch (err) {
      // a lost event delays a stream's update until its next periodic re-read (STREAM_KEEPALIVE_SECONDS)
      deps.logger.warn({ err, chargers: ids.length }, 'charger changes: could not publish');
    }
  }
}

/** The charger ids of a CHARGER_CHANGED event (anything else in it is ignored). */
export function chargerIdsOf(payload: Record<string, unknown>): string[] {
  const ids = payload.ids;
  return Array.isArray(ids) ? ids.filter((x): x is string => typeof x === 'string') : [];
}
