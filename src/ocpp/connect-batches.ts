// The connect path in batches (a reconnect storm brings a whole fleet back within seconds): the upgrade's
// credential lookup, the live-state row of a new socket and of a closed one, BootNotification and
// StatusNotification of all this process's sockets go through micro-batchers (src/lib/micro-batch.ts) that write
// each kind with one statement per batch (domain/charging/connect-batch.ts). A batch that fails is done again one
// charger at a time through the one-charger path, so a charger is judged alone. Off with INGEST_BATCH_MAX=0, like
// the ingest pipeline.
import type { Deps } from '../deps.ts';
import {
  bootMany,
  type BootEvent,
  type ChargerCredentialRow,
  type ConnectedItem,
  credentialsByIdentity,
  markConnectedMany,
  markDisconnectedMany,
  recordConnectorStatusMany,
} from '../domain/charging/connect-batch.ts';
import type { ChargerEvent, EventOutcome } from '../domain/charging/events.ts';
import { type EventContext, handleChargerEvent } from '../domain/charging/handle-event.ts';
import { markConnected, markDisconnected } from '../domain/charging/live-state.ts';
import { MicroBatcher } from '../lib/micro-batch.ts';
import type { OcppMetrics } from './metrics.ts';

/** Connect-path batches in flight at once per kind (each holds a pooled connection for one statement) */
const IN_FLIGHT = 2;

type StatusEvent = Extract<ChargerEvent, { kind: 'status' }>;
interface DisconnectedItem {
  chargerId: string;
  connectionId: string;
  at: Date;
}

export class ConnectBatches {
  private readonly credentials: MicroBatcher<string, ChargerCredentialRow | null>;
  private readonly connectedRows: MicroBatcher<ConnectedItem, void>;
  private readonly disconnectedRows: MicroBatcher<DisconnectedItem, void>;
  private readonly boots: MicroBatcher<{ ctx: EventContext; ev: BootEvent }, EventOutcome>;
  private readonly statuses: MicroBatcher<{ ctx: EventContext; ev: StatusEvent }, EventOutcome>;

  constructor(
    private readonly deps: Deps,
    metrics: OcppMetrics,
  ) {
    const base = { max: deps.config.INGEST_BATCH_MAX, flushMs: deps.config.INGEST_FLUSH_MS, maxInFlight: IN_FLIGHT };
    const o = (kind: string) => ({ ...base, onBatch: (size: number, outcome: string) => metrics.connectBatch.observe({ kind, outcome }, size) });
    this.credentials = new MicroBatcher({
      ...o('credentials'),
      key: (identity) => identity,
      run: async (identities) => {
        const rows = await credentialsByIdentity(deps.db, identities);
        return identities.map((i) => rows.get(i) ?? null);
      },
    });
    this.connectedRows = new MicroBatcher({
      ...o('connected'),
      key: (c) => c.chargerId,
      run: async (items) => {
        await markConnectedMany(deps.db, items);
        return items.map(() => undefined);
      },
      fallback: (c) => markConnected(deps, c.chargerId, c),
    });
    this.disconnectedRows = new MicroBatcher({
      ...o('disconnected'),
      key: (c) => c.chargerId,
      run: async (items) => {
        await markDisconnectedMany(deps.db, items);
        return items.map(() => undefined);
      },
      fallback: (c) => markDisconnected(deps, c.chargerId, c.connectionId, c.at),
    });
    this.boots = new MicroBatcher({
      ...o('boot'),
      key: (b) => b.ctx.chargerId,
      run: (items) =>
        bootMany(
          deps.db,
          items.map((b) => ({ chargerId: b.ctx.chargerId, ev: b.ev, cache: b.ctx.cache })),
          deps.clock(),
          deps.config.HEARTBEAT_INTERVAL_SECONDS,
          deps.config.OCPP_MAX_POWER_W,
        ),
      fallback: (b) => handleChargerEvent(deps, b.ctx, b.ev),
    });
    this.statuses = new MicroBatcher({
      ...o('status'),
      key: (s) => s.ctx.chargerId,
      run: async (items) => {
        await recordConnectorStatusMany(deps.db, items.map((s) => ({ chargerId: s.ctx.chargerId, connectorId: s.ev.connectorId, status: s.ev.status })));
        return items.map(() => ({ kind: 'ack' }) as EventOutcome);
      },
      fallback: (s) => handleChargerEvent(deps, s.ctx, s.ev),
    });
  }

  /** The active charger with this identity and its password hashes, or null (the upgrade's lookup). */
  credentialsOf(identity: string): Promise<ChargerCredentialRow | null> {
    return this.credentials.submit(identity);
  }

  /** The live-state row of a new socket (markConnected). */
  connected(item: ConnectedItem): Promise<void> {
    return this.connectedRows.submit(item);
  }

  /** The live-state row of a closed socket (markDisconnected): a whole fleet dropping at once is a few statements. */
  disconnected(item: DisconnectedItem): Promise<void> {
    return this.disconnectedRows.submit(item);
  }

  /** Whether this event goes through a connect batch. */
  handles(ev: ChargerEvent): ev is BootEvent | StatusEvent {
    return ev.kind === 'boot' || ev.kind === 'status';
  }

  submit(ctx: EventContext, ev: BootEvent | StatusEvent): Promise<EventOutcome> {
    if (ev.kind === 'boot') {
      // the charger's model may change with its boot: its power is read again (as the one-charger handler does)
      if (ctx.cache) ctx.cache.maxPowerW = undefined;
      return this.boots.submit({ ctx, ev });
    }
    return this.statuses.submit({ ctx, ev });
  }
}
