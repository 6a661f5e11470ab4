// C4.2 across processes: when a charger's newer connection is recorded by one process, the process holding its
// older socket hears it on the event bus and closes that socket at once, instead of finding out in a sweep over all
// its sockets. The live-state row stays the record (the holder re-reads it for the announced chargers before it
// closes anything); the announcement only says whom to look at. The ids recorded within WINDOW_MS go out together,
// so a reconnect storm costs a few notifications, not one per charger.
import type { Deps } from '../deps.ts';

export const OCPP_CONNECTED = 'ocpp_connected';

/** a uuid and its JSON quotes and comma are 39 bytes; 170 of them and the instance id stay under NOTIFY's 8000 */
const IDS_PER_EVENT = 170;
const WINDOW_MS = 100;

export class ConnectionNotices {
  private pending: string[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: Deps,
    private readonly instanceId: string,
  ) {}

  /** This process recorded the charger's new connection (its live-state row is committed). Never throws. */
  announce(chargerId: string): void {
    if (!this.deps.bus) return;
    this.pending.push(chargerId);
    this.timer ??= setTimeout(() => void this.flush(), WINDOW_MS);
  }

  /** Calls `taken` with the chargers another process announced; returns the unsubscribe. */
  subscribe(taken: (chargerIds: string[]) => void): () => void {
    const bus = this.deps.bus;
    if (!bus) return () => {};
    return bus.subscribe(OCPP_CONNECTED, (p) => {
      if (p.instance === this.instanceId || !Array.isArray(p.ids)) return;
      const ids = p.ids.filter((x): x is string => typeof x === 'string');
      if (ids.length) taken(ids);
    });
  }

  private async flush(): Promise<void> {
    const ids = this.pending;
    this.pending = [];
    this.timer = undefined;
    const bus = this.deps.bus;
    if (!bus) return;
    for (let i = 0; i < ids.length; i += IDS_PER_EVENT) {
      try {
        await bus.publish(this.deps.db, OCPP_CONNECTED, { instance: this.instanceId, ids: ids.slice(i, i + IDS_PER_EVENT) });
      } catch (err) {
        // the holder of an older socket then finds it in its periodic sweep, or when that socket next writes
        this.deps.logger.warn({ err, chargers: ids.length }, 'ocpp: could not announce connections');
      }
    }
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = [];
  }
}
