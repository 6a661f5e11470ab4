// GET /chargers/stream of the Personal API (C7.1): server-sent events of the user's chargers and ended sessions.
// What is sent and the event ids: src/domain/charging/stream-feed.ts. How changes arrive: the OCPP side of any
// process publishes the ids of the chargers whose live view a commit changed (CHARGER_CHANGED on the event bus);
// this process's hub hands them to the streams watching those chargers, which re-read the items from PostgreSQL.
// The auth layer (scope chargers:read) and the rate limit (the opening counts as one request) run before the
// handler; the cap of open streams per token holds across processes (stream-slots.ts).
import type { ServerResponse } from 'node:http';
import type { Deps } from '../../deps.ts';
import { CHARGER_CHANGED, chargerIdsOf } from '../../domain/charging/charger-changes.ts';
import { ChargerFeed, type FeedEvent } from '../../domain/charging/stream-feed.ts';
import { releaseStreamSlot, renewStreamSlots, slotsOfEndedOwners, STREAM_OWNERS_ENDED, takeStreamSlot } from '../../domain/charging/stream-slots.ts';
import { ChargerStream, ErrorBody } from '../../../schemas/http/charger-stream.ts';
import { principalOf } from '../auth.ts';
import type { App, RouteRegistrar } from '../types.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { throttledLog } from '../../lib/throttled-log.ts';

/** A slow reader whose unsent output grows past this is cut off; it resumes with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 1 << 20;

interface Stream {
  res: ServerResponse;
  feed: ChargerFeed;
  slotId: string;
  /** the personal token or dashboard session that opened it: the stream ends when that is revoked */
  owner: string;
  /** still reading its snapshot: it hears every charger id (it does not know its chargers yet) */
  opening: boolean;
  /** the keep-alive as an `alive` event a page's script can hear (the dashboard, D109), not a comment line */
  aliveEvents: boolean;
  ended: Promise<void>;
}

class StreamHub {
  private readonly streams = new Set<Stream>();
  private readonly byCharger = new Map<string, Set<Stream>>();
  private readonly stops: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: Deps) {}

  private start(): void {
    if (this.timer) return;
    const bus = this.deps.bus;
    if (bus) {
      this.stops.push(
        bus.subscribe(CHARGER_CHANGED, (p) => this.changed(chargerIdsOf(p))),
        // a token revoked or a dashboard signed out, in any process: its streams end now (D64)
        bus.subscribe(STREAM_OWNERS_ENDED, (p) => this.endOwners(Array.isArray(p.ids) ? p.ids.map(String) : [])),
        // the listening connection was lost meanwhile: events may be missing, every stream reads everything again
        bus.onResync(() => this.streams.forEach((s) => s.feed.refreshAll())),
      );
      // LISTEN is issued asynchronously by that first subscribe: the streams opened meanwhile read everything once
      // more when it is in place, so a change committed while it was being set up is not left to the next tick
      void bus.listening(CHARGER_CHANGED).then(() => this.streams.forEach((s) => s.feed.refreshAll()));
    }
    this.timer = setInterval(() => this.tick(), this.deps.config.STREAM_KEEPALIVE_SECONDS * 1000);
    this.timer.unref();
  }

  private changed(ids: string[]): void {
    const hit = new Map<Stream, string[]>();
    for (const id of ids) for (const s of this.byCharger.get(id) ?? []) hit.set(s, [...(hit.get(s) ?? []), id]);
    for (const s of this.streams) if (s.opening) hit.set(s, ids);
    for (const [s, list] of hit) s.feed.changed(list);
  }

  private endOwners(owners: string[]): void {
    const ended = new Set(owners);
    for (const s of this.streams) if (ended.has(s.owner)) s.res.end();
  }

  /**
   * Every STREAM_KEEPALIVE_SECONDS: the comment line, a full re-read (time-based changes: a lapsed lease), the slots
   * renewed, and the streams whose token or dashboard session ended meanwhile closed (a revocation's bus event may
   * have been missed, and a dashboard session expires without one).
   */
  private tick(): void {
    for (const s of this.streams) {
      write(s, s.aliveEvents ? 'event: alive\ndata: {}\n\n' : ': keep-alive\n\n');
      if (!s.opening) s.feed.refreshAll();
    }
    const slots = [...this.streams].map((s) => s.slotId);
    renewStreamSlots(this.deps, slots)
      .then(() => slotsOfEndedOwners(this.deps, slots))
      .then((ended) => {
        const set = new Set(ended);
        for (const s of this.streams) if (set.has(s.slotId)) s.res.end();
      })
      .catch((err) => throttledLog(this.deps.logger).event('warn', 'stream.renew_failed', { err }, 'charger stream: could not renew the open streams')); // D232
  }

  private watch(s: Stream, added: string[], removed: string[]): void {
    for (const id of added) {
      let set = this.byCharger.get(id);
      if (!set) this.byCharger.set(id, (set = new Set()));
      set.add(s);
    }
    for (const id of removed) {
      const set = this.byCharger.get(id);
      set?.delete(s);
      if (set?.size === 0) this.byCharger.delete(id);
    }
  }

  async open(res: ServerResponse, userId: string, owner: string, slotId: string, lastEventId: string | undefined, aliveEvents = false): Promise<void> {
    this.start();
    let release!: () => void;
    const s: Stream = {
      res,
      slotId,
      owner,
      opening: true,
      aliveEvents,
      ended: new Promise<void>((r) => (release = r)),
      feed: new ChargerFeed(this.deps, userId, (e) => write(s, frame(e)), (added, removed) => this.watch(s, added, removed)),
    };
    this.streams.add(s);
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      this.streams.delete(s);
      s.feed.close();
      this.watch(s, [], [...s.feed.chargerIds]);
      releaseStreamSlot(this.deps, slotId)
        .catch((err) => this.deps.logger.warn({ err }, 'charger stream: could not release the slot (it lapses)'))
        .finally(release);
    };
    res.once('close', end);
    if (res.destroyed) end(); // the client left before the listener was attached
    try {
      await s.feed.open(lastEventId);
      s.opening = false;
    } catch (err) {
      this.deps.logger.error({ err, userId }, 'charger stream: the snapshot failed; stream ended');
      res.end();
    }
  }

  /** Server shutdown: every stream ends (clients reconnect elsewhere with Last-Event-ID), slots given back. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const stop of this.stops.splice(0)) stop();
    const all = [...this.streams];
    for (const s of all) s.res.end();
    await Promise.all(all.map((s) => s.ended));
  }
}

function frame(e: FeedEvent): string {
  return `id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

function write(s: Stream, text: string): void {
  const { res } = s;
  if (res.writableEnded || res.destroyed) return;
  if (res.writableLength > MAX_BUFFERED_BYTES) {
    res.destroy();
    return;
  }
  res.write(text);
}

const hubs = new WeakMap<object, StreamHub>();

/** The streams of this service instance (one hub per app: the Personal API's and the dashboard's streams share it). */
function hubOf(app: App, deps: Deps): StreamHub {
  let hub = hubs.get(app);
  if (!hub) {
    const made = new StreamHub(deps);
    hubs.set(app, made);
    app.addHook('preClose', () => made.close());
    hub = made;
  }
  return hub;
}

/**
 * Opens a stream of this user's chargers on the request's connection: a slot of `slotOwner` (a personal token, or a
 * dashboard session) is taken first (429 too_many_streams past the cap), then the events follow until either side ends.
 */
export async function serveChargerStream(
  app: App,
  deps: Deps,
  req: FastifyRequest,
  reply: FastifyReply,
  userId: string,
  slotOwner: string,
  opts: { aliveEvents?: boolean } = {},
): Promise<void> {
  const slotId = await takeStreamSlot(deps, slotOwner);
  const last = req.headers['last-event-id'];
  reply.hijack();
  const res = reply.raw;
  req.raw.socket.setNoDelay(true);
  const set: Record<string, string | number | string[]> = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) set[k] = v; // the rate-limit headers
  res.writeHead(200, {
    ...set,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
    'x-request-id': req.id,
    connection: 'keep-alive',
  });
  res.write('retry: 2000\n\n');
  await hubOf(app, deps).open(res, userId, slotOwner, slotId, typeof last === 'string' ? last : undefined, opts.aliveEvents);
}

export const chargerStreamRoutes: RouteRegistrar = (app, deps) => {
  hubOf(app, deps);

  app.get(
    '/chargers/stream',
    {
      config: { auth: { accepts: ['personal'], scope: 'chargers:read' } },
      schema: {
        tags: ['Personal API'],
        summary: 'A push stream (server-sent events) of your chargers and ended sessions',
        response: {
          200: ChargerStream,
          401: ErrorBody,
          403: ErrorBody,
          429: ErrorBody.describe('error: Too many requests | too_many_streams (Too many requests: the rate limit, with Retry-After; too_many_streams: the token already holds STREAM_MAX_PER_TOKEN open streams)'),
        },
      },
    },
    async (req, reply) => {
      const p = principalOf(req, 'personal');
      // HEAD (fastify answers it with the GET route) names the stream's headers and opens no stream
      if (req.method === 'HEAD') {
        return reply.code(200).header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-cache, no-transform').send('');
      }
      // C7.1: a stream over the cap is refused before anything is sent (429 too_many_streams)
      await serveChargerStream(app, deps, req, reply, p.userId, p.tokenId);
    },
  );
};
