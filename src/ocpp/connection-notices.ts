// C4.2 across processes: when a charger's newer connection is recorded by one process, the process holding its
// older socket hears it on the event bus and closes that socket at once, instead of finding out in a sweep over all
// its sockets. The live-state row stays the record (the holder re-reads it for the announced chargers before it
// closes anything); the announcement only says whom to look at. The ids recorded within 100 ms go out together
// (src/db/bus-ids.ts), so a reconnect storm costs a few notifications, not one per charger.
import { CoalescedIds, idsOf } from '../db/bus-ids.ts';
import type { Deps } from '../deps.ts';

export const OCPP_CONNECTED = 'ocpp_connected';

export class ConnectionNotices {
  private readonly out: CoalescedIds | undefined;

  constructor(
    private readonly deps: Deps,
    private readonly instanceId: string,
  ) {
    this.out = deps.bus ? new CoalescedIds({ db: deps.db, bus: deps.bus, logger: deps.logger }, OCPP_CONNECTED, { instance: instanceId }) : undefined;
  }

  /** This process recorded the charger's new connection (its live-state row is committed). Never throws. */
  announce(chargerId: string): void {
    this.out?.add([chargerId]);
  }

  /** Calls `taken` with the chargers another process announced; returns the unsubscribe. */
  subscribe(taken: (chargerIds: string[]) => void): () => void {
    const bus = this.deps.bus;
    if (!bus) return () => {};
    return bus.subscribe(OCPP_CONNECTED, (p) => {
      if (p.instance === this.instanceId) return;
      const ids = idsOf(p);
      if (ids.length) taken(ids);
    });
  }

  close(): void {
    this.out?.close();
  }
}
