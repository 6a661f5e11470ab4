// The event bus between processes (src/db/bus.ts, PostgreSQL LISTEN/NOTIFY) and what rides on it: a remote
// command reaches the process holding the charger's socket through an event, and its outcome wakes the
// requester; when an event is lost, the slow poll still delivers. Two service instances on one database.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_DONE, COMMAND_SENT, sendCommand } from '../../src/domain/chargers/commands.ts';
import type { Bus } from '../../src/db/bus.ts';
import { createBus } from '../../src/db/bus.ts';
import { createLogger } from '../../src/logger.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { dbProxy } from '../helpers/db-proxy.ts';
import { logSink } from '../helpers/raw-upgrade.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, eventually } from '../helpers/ocpp-factories.ts';

let a: TestService;
let b: TestService;
let user: { userId: string; token: string };

beforeAll(async () => {
  a = await createTestService({ listen: true });
  b = await createTestService({ listen: true, db: a.testDb });
  user = await aUser(a.deps);
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

const busOf = (s: TestService) => s.deps.bus as Bus;
const instanceOf = (s: TestService) => s.deps.ocpp!.instanceId;

describe('event bus over LISTEN/NOTIFY', () => {
  it('delivers an event to every subscribing instance; in a transaction only on commit', async () => {
    const seenA: unknown[] = [];
    const seenB: unknown[] = [];
    const offA = busOf(a).subscribe('test_topic', (p) => seenA.push(p));
    const offB = busOf(b).subscribe('test_topic', (p) => seenB.push(p));
    try {
      // LISTEN is set up in the background on each instance's own connection: publish until both have one
      await eventually(async () => {
        if (seenA.length === 0 || seenB.length === 0) await busOf(a).publish(a.deps.db, 'test_topic', { n: 0 });
        expect(seenA.length).toBeGreaterThan(0);
        expect(seenB.length).toBeGreaterThan(0);
      }, 20_000);
      seenA.length = 0;
      seenB.length = 0;
      await a.deps.db
        .transaction()
        .execute(async (trx) => {
          await busOf(a).publish(trx, 'test_topic', { n: 1 });
          throw new Error('roll back');
        })
        .catch(() => undefined);
      await a.deps.db.transaction().execute((trx) => busOf(a).publish(trx, 'test_topic', { n: 2 }));
      await eventually(() => {
        expect(seenA).toContainEqual({ n: 2 });
        expect(seenB).toContainEqual({ n: 2 });
      });
      // the rolled-back event never came (the committed one, sent after it, has arrived)
      expect([...seenA, ...seenB]).not.toContainEqual({ n: 1 });
    } finally {
      offA();
      offB();
    }
  });

  it('refuses an event larger than NOTIFY carries and a topic that is not a plain name', async () => {
    await expect(busOf(a).publish(a.deps.db, 'test_topic', { big: 'x'.repeat(8000) })).rejects.toThrow(/larger than/);
    expect(() => busOf(a).subscribe('Bad-Topic"', () => {})).toThrow(/invalid topic/);
    // the service's database connection is unharmed
    expect((await sql<{ one: number }>`select 1 as one`.execute(a.deps.db)).rows[0]!.one).toBe(1);
  });
});

describe('remote commands through the bus', () => {
  it('a command sent through the other instance reaches the holder by an event and is answered', async () => {
    const ch = await anOcppCharger(a, user);
    const cli = await connectCharger(a, ch, 'ocpp1.6');
    cli.handle('TriggerMessage', async () => ({ status: 'Accepted' }));
    const sent: unknown[] = [];
    const done: unknown[] = [];
    const off1 = busOf(a).subscribe(COMMAND_SENT, (p) => sent.push(p));
    const off2 = busOf(b).subscribe(COMMAND_DONE, (p) => done.push(p));
    try {
      // b holds no socket of this charger: the command must travel to a
      const res = await b.app.inject({
        method: 'POST',
        url: `/admin/chargers/${ch.chargerId}/commands`,
        headers: { authorization: `Bearer ${b.config.ADMIN_TOKEN}` },
        payload: { action: 'TriggerMessage', payload: { requestedMessage: 'Heartbeat' } },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ response: { status: 'Accepted' } });
      expect(sent).toContainEqual(expect.objectContaining({ instance: instanceOf(a) }));
      await eventually(() => expect(done.length).toBeGreaterThan(0));
    } finally {
      off1();
      off2();
      await cli.close();
    }
  });

  it('without the event (lost, or no bus) the holder still finds the command by its slow poll', async () => {
    const ch = await anOcppCharger(a, user);
    const cli = await connectCharger(a, ch, 'ocpp1.6');
    cli.handle('TriggerMessage', async () => ({ status: 'Accepted' }));
    try {
      const { bus: _none, ...withoutBus } = b.deps;
      const r = await sendCommand(withoutBus, ch.chargerId, 'TriggerMessage', { requestedMessage: 'Heartbeat' });
      expect(r).toMatchObject({ ok: true, response: { status: 'Accepted' } });
    } finally {
      await cli.close();
    }
  });
});

// A process's first remote command opens its listening connection. The holder answers within milliseconds, so the
// requester must listen for the outcome before it asks, or the event goes by unheard and only the slow poll finds
// the answer (the first command of a process took a second). A network that takes 250 ms per packet to the
// database makes the window wide: the outcome's event must still reach the requester. PostgreSQL only (a proxy).
describe.skipIf(!process.env.DATABASE_URL)('a requester whose listening connection is slow to open', () => {
  it('listens for the outcome before it asks, and hears it', async () => {
    const slow = await dbProxy(a.testDb.url!, { delayMs: 250 });
    const bus = createBus({ ...a.testDb, url: slow.url }, createLogger({ level: 'silent' }));
    const ch = await anOcppCharger(a, user);
    const cli = await connectCharger(a, ch, 'ocpp1.6');
    cli.handle('TriggerMessage', async () => ({ status: 'Accepted' }));
    const heard: unknown[] = [];
    try {
      // subscribed together with the command's own wait: the bus opens its connection for both at once
      bus.subscribe(COMMAND_DONE, (p) => heard.push(p));
      const r = await sendCommand({ ...b.deps, bus }, ch.chargerId, 'TriggerMessage', { requestedMessage: 'Heartbeat' });
      expect(r).toMatchObject({ ok: true, response: { status: 'Accepted' } });
      await eventually(() => expect(heard).toHaveLength(1));
    } finally {
      await cli.close();
      await bus.close();
      await slow.close();
    }
  });

  it('a process hears the commands for its chargers from its first charger on', async () => {
    // the holder's own listening connection is the slow one: it listens before it takes a charger, so a command
    // sent as soon as the charger has booted reaches it by its event (the code before missed it: the 2 s poll)
    const slow = await dbProxy(a.testDb.url!, { delayMs: 1000 });
    const holder = await createTestService({ listen: true, db: { ...a.testDb, url: slow.url } });
    try {
      const ch = await anOcppCharger(holder, user);
      const cli = await connectCharger(holder, ch, 'ocpp1.6');
      cli.handle('TriggerMessage', async () => ({ status: 'Accepted' }));
      const heard: unknown[] = [];
      busOf(holder).subscribe(COMMAND_SENT, (p) => heard.push(p));
      const r = await sendCommand(b.deps, ch.chargerId, 'TriggerMessage', { requestedMessage: 'Heartbeat' });
      expect(r).toMatchObject({ ok: true, response: { status: 'Accepted' } });
      expect(heard).toContainEqual(expect.objectContaining({ instance: instanceOf(holder) }));
      await cli.close();
    } finally {
      await holder.close();
      await slow.close();
    }
  });
});

// The listening connection between a process and PostgreSQL is cut: the bus opens it again (with backoff), listens
// to every channel again, tells its subscribers to read the durable state, and keeps one connection, also when a
// subscriber opened it before the pending retry came due. PGlite is embedded (nothing to cut): PostgreSQL only.
describe.skipIf(!process.env.DATABASE_URL)('event bus after its listening connection was cut', () => {
  let direct: TestDb;
  let proxy: Awaited<ReturnType<typeof dbProxy>>;
  beforeAll(async () => {
    direct = await createTestDb();
    proxy = await dbProxy(direct.url!);
  });
  afterAll(async () => {
    await proxy?.close();
    await direct?.close();
  });

  const listeners = async () =>
    Number(
      (
        await sql<{ n: string }>`select count(*) as n from pg_stat_activity
          where datname = current_database() and application_name = 'ere-gateway-bus'`.execute(direct.db)
      ).rows[0]!.n,
    );

  it('listens again on one connection, resyncs, and delivers every event once', async () => {
    const log = logSink();
    const bus = createBus({ ...direct, url: proxy.url }, createLogger({ level: 'warn', destination: log.sink }));
    const seen: unknown[] = [];
    let resyncs = 0;
    bus.onResync(() => resyncs++);
    bus.subscribe('test_first', (p) => seen.push(p));
    const publishUntilSeen = (topic: string, payload: Record<string, unknown>) =>
      eventually(async () => {
        if (!seen.some((p) => JSON.stringify(p) === JSON.stringify(payload))) await bus.publish(direct.db, topic, payload);
        expect(seen).toContainEqual(payload);
      }, 20_000);
    try {
      await publishUntilSeen('test_first', { n: 'before' });
      expect(await listeners()).toBe(1);

      proxy.cut();
      await eventually(() => expect(log.lines.map((l) => l.msg)).toContain('bus: the listening connection was lost; opening it again'));
      await eventually(async () => expect(await listeners()).toBe(0));
      proxy.restore();
      // a subscriber comes while the reconnect (0.5 s after the loss) is still pending: it opens the connection
      bus.subscribe('test_second', (p) => seen.push(p));
      await publishUntilSeen('test_second', { n: 'after, new topic' });
      await publishUntilSeen('test_first', { n: 'after, old topic' });
      expect(resyncs).toBeGreaterThan(0);

      // past the pending retry: still one listening connection, and an event arrives once
      await new Promise((r) => setTimeout(r, 1_500));
      expect(await listeners()).toBe(1);
      seen.length = 0;
      await bus.publish(direct.db, 'test_first', { n: 'once' });
      await eventually(() => expect(seen).toContainEqual({ n: 'once' }));
      await new Promise((r) => setTimeout(r, 300));
      expect(seen).toEqual([{ n: 'once' }]);
    } finally {
      await bus.close();
    }
    // the connection is closed when close() returns; its backend (behind the proxy) leaves pg_stat_activity soon after
    await eventually(async () => expect(await listeners()).toBe(0));
  });
});
