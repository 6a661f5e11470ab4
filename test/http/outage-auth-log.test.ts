// D267: what the log says while the database is away, on the authentication path and in the routes' 503 answers.
// Before, every request wrote its own line: "credential lookup failed" at error with the pg-pool stack, "admin failure
// counter unavailable; the token check alone decides" at warn with its stack, "database unavailable; answered 503" at
// warn (an outside audit: 1.34 MB of log in a 3-minute outage at 2 requests a second). Now each is one warn line a
// minute per process (D222's throttle) with the error's code and message and no stack, and the interval's end counts
// the rest; at LOG_LEVEL=debug every occurrence is written at debug with its stack. An error that is not the database
// being unavailable (here: a table renamed away) is a bug and stays an error line of its own. The service's
// connections run through a small TCP proxy of this file's own, cut (every socket reset, new ones refused) and restored.
// PostgreSQL only (PGlite has no connection to cut).
import net from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/database.ts';
import { throttledLog } from '../../src/lib/throttled-log.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { logCapture } from '../helpers/log-capture.ts';

/** A TCP proxy to PostgreSQL that can be cut: every proxied socket destroyed, new ones closed at once. */
async function cuttableProxy(url: string) {
  const u = new URL(url);
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) return void client.destroy();
    const up = net.connect({ host: u.hostname || '127.0.0.1', port: Number(u.port || 5432) });
    for (const s of [client, up]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(up);
    up.pipe(client);
    client.on('close', () => up.destroy());
    up.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as net.AddressInfo).port);
  return {
    url: proxied.toString(),
    cut() {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      cut = false;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const info = logCapture('info');
const debug = logCapture('debug');

describe.skipIf(!process.env.DATABASE_URL)('D267: a database outage on the authentication path, in the log', () => {
  let direct: TestDb;
  let proxy: Awaited<ReturnType<typeof cuttableProxy>>;
  let handles: Array<{ close(): Promise<void> }> = [];
  let svc: TestService;
  let svcDebug: TestService;
  let token: string;

  const viaProxy = async (): Promise<TestDb> => {
    const h = await createDb({ DATABASE_URL: proxy.url, poolSize: 3 });
    handles.push(h);
    return { ...h, url: proxy.url };
  };

  beforeAll(async () => {
    direct = await createTestDb();
    proxy = await cuttableProxy(direct.url!);
    svc = await createTestService({ db: await viaProxy(), logger: info.logger });
    svcDebug = await createTestService({ db: await viaProxy(), logger: debug.logger });
    token = (await aUser(svc.deps)).token;
  });
  afterAll(async () => {
    proxy?.restore();
    await svc?.close();
    await svcDebug?.close();
    for (const h of handles) await h.close();
    await proxy?.close();
    await direct?.close();
  });

  const personal = () => svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(token) });
  const admin = (t = TEST_ADMIN_TOKEN) => svc.app.inject({ method: 'GET', url: '/admin/jobs', headers: bearer(t) });
  const hasStack = (line: Record<string, unknown>) => JSON.stringify(line).includes('    at ');

  it('every request is answered as before, and each kind of line is written once at warn, with no stack; the interval end counts the rest', { timeout: 30_000 }, async () => {
    expect((await personal()).statusCode).toBe(200);
    throttledLog(info.logger).flush(); // a fresh interval
    info.lines.length = 0;
    proxy.cut();
    try {
      for (let i = 0; i < 6; i++) {
        const p = await personal();
        expect(p.statusCode).toBe(503);
        expect(p.headers['retry-after']).toBe('5');
        expect(p.json()).toEqual({ error: 'Authentication is temporarily unavailable, try again shortly' });
        // the right admin token: the failure counter cannot be read (the token decides), then the route meets the outage
        const a = await admin();
        expect(a.statusCode).toBe(503);
        expect(a.json()).toMatchObject({ error: 'service_unavailable' });
        // a wrong one: not counted, still refused
        expect((await admin('wrong-token-0123456789')).statusCode).toBe(401);
      }
    } finally {
      proxy.restore();
    }
    const outage = info.lines.filter((l) => (l.level as number) >= 40);
    // no error line (the database away is no bug) and no stack anywhere
    expect(outage.filter((l) => (l.level as number) >= 50)).toEqual([]);
    expect(outage.filter(hasStack)).toEqual([]);
    expect(info.saying(/^credential lookup failed/)).toHaveLength(1);
    expect(info.of('auth.credential_lookup_unavailable')).toEqual([
      expect.objectContaining({ level: 40, reason: expect.any(String), reqId: expect.any(String) }),
    ]);
    expect(info.saying(/^admin failure counter unavailable/)).toHaveLength(1);
    expect(info.of('auth.admin_counter_unavailable')).toHaveLength(1);
    expect(info.of('auth.admin_counter_unavailable')[0]).toMatchObject({ level: 40, reason: expect.any(String) });
    expect(info.saying(/^database unavailable; answered 503/)).toHaveLength(1);
    expect(info.of('http.db_unavailable')[0]).toMatchObject({ level: 40, method: 'GET', route: '/admin/jobs', reason: expect.any(String) });

    // the interval ends: one line each says how many were not logged one by one
    throttledLog(info.logger).flush();
    expect(info.of('auth.credential_lookup_unavailable').at(-1)).toMatchObject({ level: 40, suppressed: 5 });
    expect(info.of('auth.admin_counter_unavailable').at(-1)).toMatchObject({ level: 40, suppressed: 11 });
    expect(info.of('http.db_unavailable').at(-1)).toMatchObject({ level: 40, suppressed: 5 });

    // back: answered again
    expect((await personal()).statusCode).toBe(200);
  });

  it('at LOG_LEVEL=debug every occurrence is written at debug with its stack, beside the one warn line', { timeout: 30_000 }, async () => {
    throttledLog(debug.logger).flush();
    debug.lines.length = 0;
    proxy.cut();
    try {
      for (let i = 0; i < 3; i++) {
        expect((await svcDebug.app.inject({ method: 'GET', url: '/chargers', headers: bearer(token) })).statusCode).toBe(503);
      }
    } finally {
      proxy.restore();
    }
    const events = debug.of('auth.credential_lookup_unavailable');
    expect(events.filter((l) => l.level === 40)).toHaveLength(1);
    expect(events.filter((l) => l.level === 40 && hasStack(l))).toEqual([]);
    const detailed = events.filter((l) => l.level === 20);
    expect(detailed).toHaveLength(3);
    for (const l of detailed) expect(hasStack(l)).toBe(true);
  });

  it('an error that is not the database being away is a bug: an error line for each, with its stack', { timeout: 30_000 }, async () => {
    info.lines.length = 0;
    await sql`alter table personal_tokens rename to personal_tokens_away`.execute(direct.db);
    await sql`alter table rate_limits rename to rate_limits_away`.execute(direct.db);
    try {
      for (let i = 0; i < 2; i++) {
        expect((await personal()).statusCode).toBe(503);
        expect((await admin('wrong-token-0123456789')).statusCode).toBe(401);
      }
    } finally {
      await sql`alter table personal_tokens_away rename to personal_tokens`.execute(direct.db);
      await sql`alter table rate_limits_away rename to rate_limits`.execute(direct.db);
    }
    const lookups = info.saying(/^credential lookup failed$/);
    expect(lookups).toHaveLength(2);
    for (const l of lookups) expect(l).toMatchObject({ level: 50, err: expect.objectContaining({ stack: expect.any(String) }) });
    const counters = info.saying(/^admin failure counter unavailable/);
    expect(counters).toHaveLength(2);
    for (const l of counters) expect(l).toMatchObject({ level: 50, err: expect.objectContaining({ stack: expect.any(String) }) });
    expect(info.of('auth.credential_lookup_unavailable')).toEqual([]);
    expect(info.of('auth.admin_counter_unavailable')).toEqual([]);
  });
});
