// One small event bus between the service's processes (and machines), over PostgreSQL LISTEN/NOTIFY. A process
// publishes a small JSON event on a topic; every process that subscribed to the topic is called with it. Published
// inside a transaction, an event is delivered when that transaction commits, and not at all if it rolls back.
//
// NOTIFY is a wake-up call, not a store: a listener that was disconnected misses what was sent meanwhile. The
// durable rows (commands, readings) stay the record; subscribers read them, and `onResync` tells them to look
// again after the listening connection was re-established.
//
// A process listens on a topic from its first subscription until the bus closes (the topics are a fixed handful;
// an UNLISTEN when the last subscriber leaves and a LISTEN when the next comes would cost two statements per remote
// command and open a window in which an event is missed). LISTEN runs in the background; whoever must not miss an
// event that its own next step causes (a requester waiting for a command's outcome) waits for `listening` first.
//
// D245: behind a pooler in transaction mode (PgBouncer) LISTEN lands on a server session that is handed to other
// clients, and nothing arrives: no error, only the poll fallbacks (commands in 1–2 s, owners' live views stale). A
// serving process therefore sends one event to itself through the pool at start, as every publisher does, and says
// so when it does not come back (bus-delivery.ts: one error line, `bus_up` 0 on /metrics); it still starts.
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { CLIENT_KEEPALIVE, withServiceOptions, type Db, type DbHandle } from './database.ts';
import { throttledLog } from '../lib/throttled-log.ts';

export type BusPayload = Record<string, unknown>;
export type BusHandler = (payload: BusPayload) => void;

/** NOTIFY's payload limit is 8000 bytes; events are small pointers to durable rows */
const MAX_PAYLOAD_BYTES = 7_900;
/** how long opening the listening connection may take before it counts as failed and is retried */
const CONNECT_TIMEOUT_MS = 5_000;
const TOPIC = /^[a-z][a-z0-9_]{0,39}$/;
const channelOf = (topic: string) => {
  if (!TOPIC.test(topic)) throw new Error(`bus: invalid topic ${JSON.stringify(topic)}`);
  return `ere_${topic}`;
};

export interface Bus {
  /** Sends an event; in a transaction, delivered on commit. */
  publish(db: Db, topic: string, payload: BusPayload): Promise<void>;
  /** Calls `handler` for every event on `topic` from any process (this one included); returns the unsubscribe. */
  subscribe(topic: string, handler: BusHandler): () => void;
  /**
   * Resolves once this process listens on `topic` (listening begins here if nothing subscribed to it yet): an event
   * published after that reaches this process's subscribers. Also resolves when LISTEN failed (logged); the
   * listening connection is then reopened with every topic, and the durable rows are the fallback.
   */
  listening(topic: string): Promise<void>;
  /** Called after the listening connection came back: events may have been missed, read the durable state. */
  onResync(handler: () => void): () => void;
  /** D264: called when the listening connection was lost or found dead (events do not arrive until onResync). */
  onLost(handler: () => void): () => void;
  close(): Promise<void>;
}

/** What the bus needs from the database: LISTEN on one connection, its notifications, its loss. */
interface Transport {
  listen(channel: string): Promise<void>;
  close(): Promise<void>;
}

export async function publish(db: Db, topic: string, payload: BusPayload): Promise<void> {
  const text = JSON.stringify(payload);
  if (Buffer.byteLength(text) > MAX_PAYLOAD_BYTES) throw new Error(`bus: event on ${topic} is larger than ${MAX_PAYLOAD_BYTES} bytes`);
  await sql`select pg_notify(${channelOf(topic)}, ${text})`.execute(db);
}

/** D264: how often the listening connection is checked with a round trip of its own, and how long that may take */
export const BUS_CHECK_INTERVAL_MS = 30_000;
export const BUS_CHECK_TIMEOUT_MS = 5_000;

export interface BusOptions {
  /** D264: a round trip on the listening connection this often (ms; default BUS_CHECK_INTERVAL_MS, 0: none) */
  checkIntervalMs?: number;
  /** D264: a check not answered within this (ms; default BUS_CHECK_TIMEOUT_MS) closes and reopens the connection */
  checkTimeoutMs?: number;
}

export function createBus(handle: DbHandle, logger: Logger, opts: BusOptions = {}): Bus {
  const handlers = new Map<string, Set<BusHandler>>();
  const lost = new Set<() => void>();
  /** each channel listened on, with its LISTEN (settled, never rejected) */
  const listened = new Map<string, Promise<void>>();
  const resync = new Set<() => void>();

  const deliver = (channel: string, text: string | undefined) => {
    const set = handlers.get(channel);
    if (!set || set.size === 0) return;
    let payload: BusPayload;
    try {
      payload = JSON.parse(text ?? '{}') as BusPayload;
    } catch {
      logger.warn({ channel }, 'bus: an event that is not JSON was ignored');
      return;
    }
    for (const h of set) {
      try {
        h(payload);
      } catch (err) {
        logger.error({ err, channel }, 'bus: a subscriber failed');
      }
    }
  };
  const afterReconnect = () => {
    for (const h of resync) {
      try {
        h();
      } catch (err) {
        logger.error({ err }, 'bus: a resync handler failed');
      }
    }
  };

  const afterLoss = () => {
    for (const h of lost) {
      try {
        h();
      } catch (err) {
        logger.error({ err }, 'bus: a loss handler failed');
      }
    }
  };

  const transport: Transport =
    handle.kind === 'pg'
      ? pgTransport(handle.url!, logger, deliver, () => [...listened.keys()], afterReconnect, afterLoss, {
          checkIntervalMs: opts.checkIntervalMs ?? BUS_CHECK_INTERVAL_MS,
          checkTimeoutMs: opts.checkTimeoutMs ?? BUS_CHECK_TIMEOUT_MS,
        })
      : pgliteTransport(handle, deliver);

  const listenOn = (channel: string): Promise<void> => {
    let done = listened.get(channel);
    if (!done) {
      done = transport.listen(channel).catch((err) => throttledLog(logger).event('warn', 'bus.listen_failed', { err, channel }, 'bus: LISTEN failed; retried on reconnect'));
      listened.set(channel, done);
    }
    return done;
  };

  return {
    publish,
    subscribe(topic, handler) {
      const channel = channelOf(topic);
      let set = handlers.get(channel);
      if (!set) {
        set = new Set();
        handlers.set(channel, set);
      }
      set.add(handler);
      void listenOn(channel);
      return () => {
        set.delete(handler);
        if (set.size === 0 && handlers.get(channel) === set) handlers.delete(channel);
      };
    },
    listening: (topic) => listenOn(channelOf(topic)),
    onResync(handler) {
      resync.add(handler);
      return () => resync.delete(handler);
    },
    onLost(handler) {
      lost.add(handler);
      return () => lost.delete(handler);
    },
    async close() {
      handlers.clear();
      resync.clear();
      lost.clear();
      await transport.close();
    },
  };
}

/**
 * PostgreSQL: one dedicated connection per process (LISTEN does not work through a pool), re-established with
 * backoff when it drops; its channels are listened to again and subscribers told to resync. D224: its warnings come
 * at every attempt of an outage, so they go through D222's throttle: the first of each event in a minute at once,
 * then a count of the rest.
 */
function pgTransport(
  url: string,
  logger: Logger,
  deliver: (channel: string, text: string | undefined) => void,
  channels: () => string[],
  afterReconnect: () => void,
  afterLoss: () => void,
  check: { checkIntervalMs: number; checkTimeoutMs: number },
): Transport {
  let client: pg.Client | undefined;
  let checking: NodeJS.Timeout | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let closed = false;
  let attempt = 0;
  let retry: NodeJS.Timeout | undefined;

  const quote = (channel: string) => `"${channel}"`; // channels are checked against TOPIC: no quote inside
  /** the channels each connection has listened on: LISTEN once per channel and connection */
  const listenedOn = new WeakMap<pg.Client, Set<string>>();
  const listenOnce = async (c: pg.Client, channel: string) => {
    let done = listenedOn.get(c);
    if (!done) listenedOn.set(c, (done = new Set()));
    if (done.has(channel)) return;
    await c.query(`LISTEN ${quote(channel)}`);
    done.add(channel);
  };

  const connect = (): Promise<pg.Client> => {
    connecting ??= (async () => {
      // a connection that cannot be opened (server at max_connections, network cut) fails after this and is retried
      // D264, D265: TCP keepalive on the client, and the service's startup options (the server's keepalive among them)
      const c = new pg.Client({
        ...withServiceOptions(url),
        application_name: 'ere-gateway-bus',
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        ...CLIENT_KEEPALIVE,
      });
      c.on('notification', (n) => deliver(n.channel, n.payload));
      c.on('error', (err) => throttledLog(logger).event('warn', 'bus.connection_failed', { err }, 'bus: the listening connection failed'));
      c.on('end', () => {
        if (client !== c) return; // one that never opened, or already replaced
        client = undefined;
        if (closed) return;
        throttledLog(logger).event('warn', 'bus.connection_lost', {}, 'bus: the listening connection was lost; opening it again');
        afterLoss();
        scheduleReconnect();
      });
      try {
        await c.connect();
        for (const ch of channels()) await listenOnce(c, ch);
      } catch (err) {
        await c.end().catch(() => {});
        throw err;
      }
      if (closed) {
        await c.end().catch(() => {});
        throw new Error('bus: closed');
      }
      // one listening connection: a retry still pending (a subscriber opened this one meanwhile) is not needed
      if (retry) clearTimeout(retry);
      retry = undefined;
      client = c;
      const reconnected = attempt > 0;
      attempt = 0;
      if (reconnected) afterReconnect();
      return c;
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  };
  const scheduleReconnect = () => {
    if (closed || retry) return;
    attempt += 1;
    const ms = Math.min(30_000, 250 * 2 ** Math.min(attempt, 7));
    retry = setTimeout(() => {
      retry = undefined;
      if (client) return;
      connect().catch((err) => {
        throttledLog(logger).event('warn', 'bus.reconnect_failed', { err, attempt }, 'bus: could not reconnect the listening connection');
        scheduleReconnect();
      });
    }, ms);
    retry.unref();
  };
  /**
   * D264: the listening connection only receives, so a dead one (the server gone, the network dropping its packets,
   * the server's side closed while ours stays open) says nothing: no error, no end, events stop. A round trip on it
   * every checkIntervalMs that does not come back within checkTimeoutMs (or fails) closes it; its 'end' then reopens
   * it with every channel (bus.connection_lost, subscribers told to resync, bus_up 0 until the delivery check after).
   */
  const checkConnection = () => {
    const c = client;
    if (!c || closed) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${check.checkTimeoutMs} ms`)), check.checkTimeoutMs);
    });
    Promise.race([c.query('select 1'), late]).then(
      () => clearTimeout(timer),
      (err: unknown) => {
        clearTimeout(timer);
        if (client !== c || closed) return;
        throttledLog(logger).event(
          'warn',
          'bus.connection_dead',
          { reason: err instanceof Error ? err.message : String(err), timeoutMs: check.checkTimeoutMs },
          'bus: the listening connection did not answer its check; closing it and opening it again',
        );
        (c as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      },
    );
  };
  if (check.checkIntervalMs > 0) {
    checking = setInterval(checkConnection, check.checkIntervalMs);
    checking.unref();
  }

  const ready = async (): Promise<pg.Client | undefined> => {
    if (client) return client;
    try {
      return await connect();
    } catch (err) {
      throttledLog(logger).event('warn', 'bus.open_failed', { err }, 'bus: could not open the listening connection');
      scheduleReconnect();
      return undefined;
    }
  };

  return {
    async listen(channel) {
      const c = await ready();
      // a channel added while connecting was listened to by connect() itself
      if (c) await listenOnce(c, channel);
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      if (checking) clearInterval(checking);
      const c = client ?? (await connecting?.catch(() => undefined));
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}

/** Embedded PGlite: one process, one backend; its own listen() delivers what pg_notify sends. */
function pgliteTransport(handle: DbHandle, deliver: (channel: string, text: string | undefined) => void): Transport {
  const stops = new Map<string, () => Promise<void>>();
  return {
    async listen(channel) {
      if (stops.has(channel) || !handle.pglite) return;
      const stop = await handle.pglite.listen(channel, (text) => deliver(channel, text));
      stops.set(channel, stop);
    },
    async close() {
      const all = [...stops.values()];
      stops.clear();
      await Promise.all(all.map((s) => s().catch(() => {})));
    },
  };
}
