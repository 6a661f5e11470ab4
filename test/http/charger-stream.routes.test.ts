// C7.1 GET /chargers/stream across processes: two service instances on one database, each with its own event bus
// connection; the charger's socket is held by `ocpp`, the streams are read from `api` over real HTTP (fetch and a
// body reader). A reading is pushed within 1 s of its commit, a session event follows its end, Last-Event-ID
// resumes, another user sees nothing, 401/403, the per-token cap holds across processes, a revoked token's streams
// end, shutdown ends streams.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RPCClient } from 'ocpp-rpc';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, eventually, isoSeconds, type TestCharger } from '../helpers/ocpp-factories.ts';
import { dbProxy } from '../helpers/db-proxy.ts';
import { sql } from 'kysely';

interface SseEvent {
  id: string;
  event: string;
  data: Record<string, unknown>;
  at: number;
}

interface SseClient {
  status: number;
  headers: Headers;
  body: unknown;
  events: SseEvent[];
  comments: string[];
  ended: boolean;
  /** the first event after index `from` that matches, waiting up to `ms` */
  next(match: (e: SseEvent) => boolean, ms?: number, from?: number): Promise<SseEvent>;
  close(): void;
}

async function openStream(base: string, token: string | null, headers: Record<string, string> = {}): Promise<SseClient> {
  const abort = new AbortController();
  const res = await fetch(`${base}/chargers/stream`, {
    headers: { accept: 'text/event-stream', ...(token ? bearer(token) : {}), ...headers },
    signal: abort.signal,
  });
  const c: SseClient = {
    status: res.status,
    headers: res.headers,
    body: null,
    events: [],
    comments: [],
    ended: false,
    async next(match, ms = 5000, from = 0) {
      return eventually(() => {
        const e = c.events.slice(from).find(match);
        if (!e) throw new Error(`no matching event among ${c.events.length}: ${JSON.stringify(c.events.slice(from).map((x) => [x.event, x.data.id]))}`);
        return e;
      }, ms);
    },
    close: () => abort.abort(),
  };
  if (res.status !== 200) {
    c.body = await res.json();
    return c;
  }
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    let buf = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const e: Partial<SseEvent> & { data?: Record<string, unknown> } = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) c.comments.push(line);
            else if (line.startsWith('id: ')) e.id = line.slice(4);
            else if (line.startsWith('event: ')) e.event = line.slice(7);
            else if (line.startsWith('data: ')) e.data = JSON.parse(line.slice(6));
          }
          if (e.event && e.data) c.events.push({ id: e.id!, event: e.event, data: e.data, at: Date.now() });
        }
      }
    } catch {
      // aborted
    } finally {
      c.ended = true;
    }
  })();
  return c;
}

let ocpp: TestService; // holds the charger sockets
let api: TestService; // serves the streams
let owner: { userId: string; token: string };
let other: { userId: string; token: string };
let charger: TestCharger;
let otherCharger: TestCharger;
let cli: RPCClient;
const streams: SseClient[] = [];
const track = (s: SseClient) => (streams.push(s), s);

beforeAll(async () => {
  ocpp = await createTestService({ listen: true });
  api = await createTestService({ listen: true, db: ocpp.testDb, env: { STREAM_MAX_PER_TOKEN: '2', STREAM_KEEPALIVE_SECONDS: '1' } });
  owner = await aUser(ocpp.deps);
  other = await aUser(ocpp.deps);
  charger = await anOcppCharger(ocpp, owner, { nickname: 'Oprit' });
  otherCharger = await anOcppCharger(ocpp, other, { nickname: 'Buren' });
});
afterAll(async () => {
  for (const s of streams) s.close();
  await cli?.close();
  await api?.close();
  await ocpp?.close();
});

const sessionsOf = async (token: string) => (await api.app.inject({ method: 'GET', url: '/sessions', headers: bearer(token) })).json().sessions;

describe('GET /chargers/stream', () => {
  it('refuses a missing token (401) and a token without chargers:read (403)', async () => {
    const none = await openStream(api.url, null);
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ error: 'Missing or invalid API token' });
    const writer = await aUser(api.deps, { scopes: ['chargers:write'] });
    const wrong = await openStream(api.url, writer.token);
    expect(wrong.status).toBe(403);
    expect(wrong.body).toMatchObject({ error: 'Insufficient scope', required_scope: 'chargers:read' });
  });

  it('pushes a reading committed in the other process within 1 s, then the ended session; another user sees none of it', async () => {
    const s = track(await openStream(api.url, owner.token));
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(s.headers.get('cache-control')).toContain('no-cache');
    expect(s.headers.get('x-accel-buffering')).toBe('no');
    expect(s.headers.get('ratelimit-policy')).toContain('"personal"'); // the opening counted as a request
    const theirs = track(await openStream(api.url, other.token));
    // the snapshot: the user's one charger, exactly GET /chargers' item
    const snap = await s.next((e) => e.event === 'charger');
    const list = (await api.app.inject({ method: 'GET', url: '/chargers', headers: bearer(owner.token) })).json().chargers;
    expect(snap.data).toEqual(list[0]);
    expect(snap.data).toMatchObject({ id: charger.chargerId, status: 'offline', is_charging: false });
    await theirs.next((e) => e.event === 'charger' && e.data.id === otherCharger.chargerId);

    cli = await connectCharger(ocpp, charger, 'ocpp1.6');
    await s.next((e) => e.event === 'charger' && e.data.status === 'online');
    const t0 = Date.now() - 20 * 60_000;
    const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG-1', meterStart: 12_345, timestamp: isoSeconds(t0) })) as {
      transactionId: number;
    };
    await s.next((e) => e.event === 'charger' && e.data.is_charging === true);

    const from = s.events.length;
    await cli.call('MeterValues', {
      connectorId: 1,
      transactionId,
      meterValue: [{ timestamp: isoSeconds(t0 + 10 * 60_000), sampledValue: [{ value: '13579', measurand: 'Energy.Active.Import.Register', unit: 'Wh' }] }],
    });
    const answered = Date.now(); // the answer comes after the commit
    const pushed = await s.next((e) => e.event === 'charger' && e.data.latest_meter_wh === 13_579, 3000, from);
    expect(pushed.at - answered).toBeLessThan(1000);
    expect((pushed.data.current_session as { kwh_so_far: number }).kwh_so_far).toBe(1.23); // 13,579 − 12,345 Wh
    expect((pushed.data.current_session as { wh_so_far: number }).wh_so_far).toBe(1234); // the same, to the Wh (D108)
    const [live] = (await api.app.inject({ method: 'GET', url: '/chargers', headers: bearer(owner.token) })).json().chargers;
    expect(pushed.data).toEqual(live);

    await cli.call('StopTransaction', { transactionId, meterStop: 14_000, timestamp: isoSeconds(t0 + 15 * 60_000), reason: 'Local' });
    const ended = await s.next((e) => e.event === 'session');
    const [item] = await sessionsOf(owner.token);
    expect(ended.data).toEqual(item);
    expect(ended.data).toMatchObject({ charger_id: charger.chargerId, status: 'completed', kwh: 1.66 }); // 1,655 Wh
    await s.next((e) => e.event === 'charger' && e.data.is_charging === false && e.data.latest_meter_wh === 14_000);
    // ids only grow
    const ids = s.events.map((e) => BigInt(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(new Set(ids).size).toBe(ids.length);
    // a keep-alive comment (STREAM_KEEPALIVE_SECONDS=1 here)
    await eventually(() => expect(s.comments).toContain(': keep-alive'), 3000);

    // the neighbour's stream saw its own snapshot and nothing of the owner's charger
    expect(theirs.events.every((e) => e.data.id === otherCharger.chargerId)).toBe(true);
    expect(theirs.events.map((e) => e.event)).toEqual(['charger']);
    s.close();
    theirs.close();
  });

  it('resumes with Last-Event-ID: what happened while disconnected follows, a fresh charger event first', async () => {
    const s = track(await openStream(api.url, owner.token));
    await s.next((e) => e.event === 'charger');
    const lastId = s.events.at(-1)!.id;
    s.close();
    await eventually(() => expect(s.ended).toBe(true));

    // meanwhile: a whole session starts and ends
    // (after the first session's end 5 minutes ago: a start reading equal to that stop reading would be a replay)
    const t0 = Date.now() - 4 * 60_000;
    const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG-2', meterStart: 14_000, timestamp: isoSeconds(t0) })) as {
      transactionId: number;
    };
    await cli.call('StopTransaction', { transactionId, meterStop: 14_500, timestamp: isoSeconds(t0 + 3 * 60_000), reason: 'Local' });
    const missed = (await sessionsOf(owner.token)).find((x: { kwh: number }) => x.kwh === 0.5);
    expect(missed, JSON.stringify(await sessionsOf(owner.token))).toBeDefined();

    const again = track(await openStream(api.url, owner.token, { 'last-event-id': lastId }));
    const state = await again.next((e) => e.event === 'charger');
    expect(state.data).toMatchObject({ id: charger.chargerId, is_charging: false, latest_meter_wh: 14_500 });
    const session = await again.next((e) => e.event === 'session' && e.data.id === missed.id);
    expect(session.data).toEqual(missed);
    expect(BigInt(state.id)).toBeGreaterThan(BigInt(lastId));
    again.close();
  });

  it('answers HEAD with the stream headers and ends it at once, taking no slot', async () => {
    const slots = async () => (await sql<{ n: number }>`select count(*)::int as n from charger_streams`.execute(api.deps.db)).rows[0]!.n;
    const before = await slots();
    const head = await fetch(`${api.url}/chargers/stream`, { method: 'HEAD', headers: bearer(owner.token), signal: AbortSignal.timeout(5000) });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await slots()).toBeLessThanOrEqual(before);
  });

  it('caps open streams per token across processes (429 too_many_streams) and frees a slot on close', async () => {
    const cap = await aUser(api.deps, { scopes: ['chargers:read'] });
    // the ocpp instance's own cap is the default (5); the api instance allows 2 per token, counting both processes
    const a = track(await openStream(ocpp.url, cap.token));
    const b = track(await openStream(api.url, cap.token));
    expect([a.status, b.status]).toEqual([200, 200]);
    const c = await openStream(api.url, cap.token);
    expect(c.status).toBe(429);
    expect(c.body).toEqual({ error: 'too_many_streams', detail: expect.stringContaining('2 open streams') });
    a.close();
    const d = await eventually(async () => {
      const r = await openStream(api.url, cap.token);
      expect(r.status).toBe(200);
      return track(r);
    });
    d.close();
    b.close();
  });

  it('ends a stream when its token is revoked: at once from any process, else at the next keep-alive (D64)', async () => {
    const tokenIdOf = async (userId: string) =>
      (await api.deps.db.selectFrom('personal_tokens').select('id').where('user_id', '=', userId).where('revoked_at', 'is', null).executeTakeFirstOrThrow()).id;
    const slotsOf = async (tokenId: string) => (await api.deps.db.selectFrom('charger_streams').select('id').where('token_id', '=', tokenId).execute()).length;

    // held by `ocpp` (keep-alive every 15 s there), revoked through `api`: only the revocation's event ends it in time
    const u = await aUser(api.deps, { scopes: ['chargers:read'] });
    const tokenId = await tokenIdOf(u.userId);
    const s = track(await openStream(ocpp.url, u.token));
    expect(s.status).toBe(200);
    await eventually(async () => expect(await slotsOf(tokenId)).toBe(1));
    const { revokePersonalToken } = await import('../../src/domain/credentials/personal-tokens.ts');
    await revokePersonalToken(api.deps, u.userId, tokenId);
    await eventually(() => expect(s.ended).toBe(true), 5000);
    await eventually(async () => expect(await slotsOf(tokenId)).toBe(0)); // its slot given back
    expect((await openStream(ocpp.url, u.token)).status).toBe(401);

    // the revocation's event missed (here: written without one): the stream ends at its process's next keep-alive
    // (every second on `api`)
    const v = await aUser(api.deps, { scopes: ['chargers:read'] });
    const vId = await tokenIdOf(v.userId);
    const t = track(await openStream(api.url, v.token));
    expect(t.status).toBe(200);
    await eventually(() => expect(t.comments).toContain(': keep-alive'), 3000);
    expect(t.ended).toBe(false);
    await api.deps.db.updateTable('personal_tokens').set({ revoked_at: new Date() }).where('id', '=', vId).execute();
    await eventually(() => expect(t.ended).toBe(true), 5000);

    // a new token minted for a user revokes the earlier one (C1.6), and its streams with it
    const w = await aUser(api.deps, { scopes: ['chargers:read'] });
    const x = track(await openStream(ocpp.url, w.token));
    expect(x.status).toBe(200);
    await eventually(async () => expect(await slotsOf(await tokenIdOf(w.userId))).toBe(1));
    const { mintPersonalToken } = await import('../../src/domain/credentials/tokens.ts');
    await mintPersonalToken(api.deps, w.userId, ['chargers:read']);
    await eventually(() => expect(x.ended).toBe(true), 5000);
  });

  it('ends its streams when the service shuts down', async () => {
    const third = await createTestService({ listen: true, db: ocpp.testDb });
    const s = track(await openStream(third.url, owner.token));
    await s.next((e) => e.event === 'charger');
    const closing = third.close();
    await eventually(() => expect(s.ended).toBe(true), 10_000);
    await closing;
    // every stream of this file is closed now: no slot is left behind
    await eventually(async () => expect(await ocpp.deps.db.selectFrom('charger_streams').select('id').execute()).toEqual([]));
  });
});

// A process's first stream opens its listening connection, and a change committed before LISTEN is in place is an
// event this process never hears: the streams opened meanwhile read everything again once it is in place. Here the
// listening connection goes through a proxy that holds each packet 1 s, so LISTEN is in place about 4 s after the
// stream opened; a session started 1.5 s after must still reach the stream before the next keep-alive (60 s here).
// The code before re-read once, 1 s after the first stream opened, and missed it. PostgreSQL only (a proxy).
describe.skipIf(!process.env.DATABASE_URL)('a stream opened while its process still sets up LISTEN', () => {
  it('gets a change committed before LISTEN was in place', async () => {
    const slow = await dbProxy(ocpp.testDb.url!, { delayMs: 1000 });
    const late = await createTestService({ listen: true, db: { ...ocpp.testDb, url: slow.url }, env: { STREAM_KEEPALIVE_SECONDS: '60' } });
    const user = await aUser(ocpp.deps);
    const ch = await anOcppCharger(ocpp, user, { nickname: 'Laat' });
    const c = await connectCharger(ocpp, ch, 'ocpp1.6');
    try {
      const s = track(await openStream(late.url, user.token));
      await s.next((e) => e.event === 'charger' && e.data.status === 'online');
      await new Promise((r) => setTimeout(r, 1500));
      await c.call('StartTransaction', { connectorId: 1, idTag: 'TAG-L', meterStart: 1_000, timestamp: isoSeconds(Date.now()) });
      await s.next((e) => e.event === 'charger' && e.data.is_charging === true, 15_000);
      s.close();
    } finally {
      await c.close();
      await late.close();
      await slow.close();
    }
  });
});
