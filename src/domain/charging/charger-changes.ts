// C7.1: "this charger's live view changed" on the event bus (src/db/bus.ts), for the push streams of every
// process (GET /chargers/stream). Published after the commit that made the change (an OCPP message applied, a
// socket connected or closed, an operator's review decision), so a reader that re-reads the charger sees it.
//
// The event carries charger ids only: the streams read the item itself from PostgreSQL (the same query as
// GET /chargers). The ids published within 100 ms of the first one go out together, as few notifications as fit
// NOTIFY's payload (src/db/bus-ids.ts): at a steady fleet rate each batch commits alone, and one NOTIFY
// per batch would cost as many statements as the batches themselves. A stream reads at most every 200 ms anyway.
import type { Bus } from '../../db/bus.ts';
import { CoalescedIds, idsOf } from '../../db/bus-ids.ts';
import type { Deps } from '../../deps.ts';

export const CHARGER_CHANGED = 'charger_changed';

/** one coalescing publisher per bus (each service instance has its own) */
const publishers = new WeakMap<Bus, CoalescedIds>();

/** Marks the chargers changed; the bus event follows within 100 ms (src/db/bus-ids.ts). Never throws. */
export function publishChargerChanges(deps: Deps, chargerIds: Iterable<string>): void {
  const bus = deps.bus;
  if (!bus) return;
  let p = publishers.get(bus);
  if (!p) publishers.set(bus, (p = new CoalescedIds({ db: deps.db, bus, logger: deps.logger }, CHARGER_CHANGED)));
  p.add(chargerIds);
}

/** The charger ids of a CHARGER_CHANGED event (anything else in it is ignored). */
export const chargerIdsOf = idsOf;
