// C4.12 bounded resources at the HTTP and database edge: a request stalled in its headers or body is closed,
// an idle keep-alive connection is closed, plain HTTP connections are capped per process (WebSockets leave the
// count at their upgrade; TLS handshakes are bounded and counted too), and every PostgreSQL connection carries a
// statement_timeout. Raw TCP sockets, as a slow or hostile client would send; the assertions are that the socket
// gets closed, never how fast.
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/database.ts';
import { sql } from 'kysely';
import { createTestService, type TestService } from '../helpers/app.ts';
import { createTestDb } from '../helpers/db.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, ocppClient } from '../helpers/ocpp-factories.ts';

interface Raw {
  socket: net.Socket;
  /** everything received so far */
  data(): string;
  closed: Promise<void>;
}

function rawSocket(svc: TestService): Promise<Raw> {
  const { port } = new URL(svc.url);
  return new Promise((resolve, reject) => {
    let data = '';
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.on('data', (d) => (data += d.toString('latin1')));
    socket.on('error', () => {}); // a reset is one way of being closed
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('connect', () => resolve({ socket, data: () => data, closed }));
    socket.once('error', reject);
  });
}

/** Writes `chunk` every 200 ms until the socket closes. */
function dribble(raw: Raw, chunk: string): void {
  const t = setInterval(() => (raw.socket.destroyed ? clearInterval(t) : raw.socket.write(chunk)), 200);
  void raw.closed.then(() => clearInterval(t));
}

/** A keep-alive GET /healthz on the socket; resolves once its 200 arrived. */
async function healthz(raw: Raw): Promise<void> {
  const before = raw.data().length;
  raw.socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n');
  for (let i = 0; i < 200 && !/"status":"ok"/.test(raw.data().slice(before)); i++) await new Promise((r) => setTimeout(r, 25));
  expect(raw.data().slice(before)).toMatch(/^HTTP\/1\.1 200/);
}

describe('HTTP timeouts (C4.12)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService({
      listen: true,
      env: { HTTP_HEADERS_TIMEOUT_SECONDS: '1', HTTP_REQUEST_TIMEOUT_SECONDS: '2', HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '1' },
    });
  });
  afterAll(() => svc?.close());

  it('headers sent slowly: the request is answered 408 and the socket closed', { timeout: 30_000 }, async () => {
    const raw = await rawSocket(svc);
    raw.socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n');
    dribble(raw, 'X-Slow: a\r\n');
    await raw.closed;
    expect(raw.data()).not.toMatch(/"status":"ok"/);
    expect(raw.data()).toMatch(/^(HTTP\/1\.1 408|$)/);
  });

  it('a body sent slowly: the request is answered 408 and the socket closed', { timeout: 30_000 }, async () => {
    const raw = await rawSocket(svc);
    raw.socket.write('POST /oauth/token HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{');
    dribble(raw, ' ');
    await raw.closed;
    expect(raw.data()).toMatch(/^(HTTP\/1\.1 408|$)/);
  });

  it('a connection that sends nothing is closed', { timeout: 30_000 }, async () => {
    const raw = await rawSocket(svc);
    await raw.closed;
    expect(raw.data()).not.toMatch(/^HTTP\/1\.1 2/);
  });

  it('an idle keep-alive connection is closed after its last answer', { timeout: 30_000 }, async () => {
    const raw = await rawSocket(svc);
    await healthz(raw);
    await raw.closed;
  });
});

describe('HTTP pipelining (D111)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService({ listen: true });
  });
  afterAll(() => svc?.close());

  it('a connection that pipelines requests without reading the answers is closed past MAX_PIPELINED; a few are answered in order', { timeout: 30_000 }, async () => {
    // a client that pipelines a little is served, answers in order
    const few = await rawSocket(svc);
    few.socket.write('GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n'.repeat(3) + 'GET /nope HTTP/1.1\r\nHost: t\r\n\r\n');
    const statuses = () => [...few.data().matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
    for (let i = 0; i < 200 && statuses().length < 4; i++) await new Promise((r) => setTimeout(r, 25));
    expect(statuses()).toEqual(['200', '200', '200', '404']);
    few.socket.destroy();

    // thousands at once on a connection that never reads: closed (before, each was started: 1.5 GB and a dry pool)
    const flood = await rawSocket(svc);
    flood.socket.pause();
    flood.socket.write('GET /nope HTTP/1.1\r\nHost: t\r\n\r\n'.repeat(5000));
    await flood.closed;
    // and the process answers everyone else
    const res = await fetch(`${svc.url}/healthz`);
    expect(res.status).toBe(200);
  });
});

describe('HTTP connection cap (C4.12)', () => {
  let svc: TestService;
  beforeAll(async () => {
    // one WebSocket fills the OCPP cap, so the HTTP cap is HTTP_MAX_CONNECTIONS alone (D66)
    svc = await createTestService({ listen: true, env: { HTTP_MAX_CONNECTIONS: '2', OCPP_MAX_CONNECTIONS: '1' } });
  });
  afterAll(() => svc?.close());

  it('beyond HTTP_MAX_CONNECTIONS a new connection is closed at once; a WebSocket does not count', { timeout: 30_000 }, async () => {
    const user = await aUser(svc.deps);
    const charger = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, charger, 'ocpp1.6');
    try {
      const a = await rawSocket(svc);
      const b = await rawSocket(svc);
      await healthz(a);
      await healthz(b);
      const c = await rawSocket(svc);
      c.socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n');
      await c.closed;
      expect(c.data()).toBe('');
      const metrics = await svc.app.inject({ method: 'GET', url: '/metrics' });
      expect(metrics.body).toMatch(/^http_connections_refused_total [1-9]/m);

      // a closed connection frees its place
      a.socket.end();
      await a.closed;
      let d: Raw | undefined;
      for (let i = 0; i < 50 && !d; i++) {
        const attempt = await rawSocket(svc);
        attempt.socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n');
        const answered = await Promise.race([attempt.closed.then(() => false), new Promise((r) => setTimeout(() => r(true), 300))]);
        if (answered && /^HTTP\/1\.1 200/.test(attempt.data())) d = attempt;
        else await new Promise((r) => setTimeout(r, 50));
      }
      expect(d).toBeDefined();
      d!.socket.destroy();
      b.socket.destroy();
      // the charger is still connected and answered
      expect(await cli.call('Heartbeat', {})).toMatchObject({ currentTime: expect.any(String) });
    } finally {
      await cli.close({ force: true });
    }
  });
});

describe('a reconnect storm fits: the HTTP cap takes the places the OCPP cap leaves unused (D66)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService({ listen: true, env: { HTTP_MAX_CONNECTIONS: '1', OCPP_MAX_CONNECTIONS: '3' } });
  });
  afterAll(() => svc?.close());

  /** a new connection answers GET /healthz (true) or is closed at once (false) */
  const admitted = async (): Promise<{ ok: boolean; raw: Raw }> => {
    const raw = await rawSocket(svc);
    raw.socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n');
    for (let i = 0; i < 100 && !/"status":"ok"/.test(raw.data()) && !raw.socket.destroyed; i++) await new Promise((r) => setTimeout(r, 20));
    return { ok: /^HTTP\/1\.1 200/.test(raw.data()), raw };
  };

  it('with no WebSocket open, 1 + 3 connections are admitted and the next is closed; each WebSocket takes one place back', { timeout: 30_000 }, async () => {
    const held = [await admitted(), await admitted(), await admitted(), await admitted()];
    expect(held.map((h) => h.ok)).toEqual([true, true, true, true]);
    const fifth = await admitted();
    expect(fifth.ok).toBe(false);
    expect(fifth.raw.data()).toBe('');

    // two places free again; a charger's connection is an HTTP one until its upgrade, then a WebSocket
    for (const h of held.splice(0, 2)) {
      h.raw.socket.destroy();
      await h.raw.closed;
    }
    const user = await aUser(svc.deps);
    const cli = await connectCharger(svc, await anOcppCharger(svc, user), 'ocpp1.6');
    try {
      // now 2 HTTP connections and 1 WebSocket: the cap is 1 + (3 − 1) = 3 HTTP connections, one more fits
      let third: { ok: boolean; raw: Raw } | undefined;
      for (let i = 0; i < 50 && !third?.ok; i++) third = await admitted(); // the closed ones leave the count on their 'close'
      expect(third!.ok).toBe(true);
      const fourth = await admitted();
      expect(fourth.ok).toBe(false);
      third!.raw.socket.destroy();
      for (const h of held) h.raw.socket.destroy();
      expect(await cli.call('Heartbeat', {})).toMatchObject({ currentTime: expect.any(String) });
    } finally {
      await cli.close({ force: true });
    }
  });
});

describe('a reconnect storm is queued by the kernel, not refused: the listen backlog (D67)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService({ listen: true, env: { LISTEN_BACKLOG: '1234' } });
  });
  afterAll(() => svc?.close());

  it('the listening socket queues LISTEN_BACKLOG connections for the process to accept', () => {
    const { port } = new URL(svc.url);
    // ss shows a listening socket's backlog as its Send-Q (Linux caps it at net.core.somaxconn, 4096 here)
    const line = execFileSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' }).trim().split('\n')[0] ?? '';
    const [state, , backlog] = line.split(/\s+/);
    expect(state).toBe('LISTEN');
    expect(backlog).toBe('1234');
  });
});

describe('TLS: handshakes are bounded and counted (C4.12)', () => {
  let svc: TestService;
  beforeAll(async () => {
    const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '../service/fixtures');
    svc = await createTestService({
      listen: true,
      env: {
        TLS_CERT_FILE: path.join(fixtures, 'test-only-tls-cert.pem'),
        TLS_KEY_FILE: path.join(fixtures, 'test-only-tls-key.pem'),
        HTTP_HEADERS_TIMEOUT_SECONDS: '1',
        HTTP_MAX_CONNECTIONS: '2',
        OCPP_MAX_CONNECTIONS: '1',
      },
    });
  });
  afterAll(() => svc?.close());

  /** GET /healthz over TLS on a connection of its own; resolves with the status line, or '' when refused */
  const tlsHealthz = (): Promise<{ status: string; socket: tls.TLSSocket }> =>
    new Promise((resolve) => {
      let data = '';
      const socket = tls.connect({ port: Number(new URL(svc.url).port), host: '127.0.0.1', rejectUnauthorized: false }, () =>
        socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n'),
      );
      socket.on('data', (d) => {
        data += d.toString('latin1');
        if (/"status":"ok"/.test(data)) resolve({ status: data.split('\r\n')[0]!, socket });
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve({ status: data.split('\r\n')[0] ?? '', socket }));
    });

  it('a TCP connection that never starts its TLS handshake is closed', { timeout: 30_000 }, async () => {
    const raw = await rawSocket(svc);
    await raw.closed;
    expect(raw.data()).toBe('');
  });

  it('TLS connections count against HTTP_MAX_CONNECTIONS; a wss:// charger leaves the count', { timeout: 30_000 }, async () => {
    const user = await aUser(svc.deps);
    const charger = await anOcppCharger(svc, user);
    const cli = ocppClient(svc, charger.identity, charger.password, ['ocpp1.6'], { wsOpts: { rejectUnauthorized: false } } as never);
    await cli.connect();
    try {
      const a = await tlsHealthz();
      const b = await tlsHealthz();
      expect([a.status, b.status]).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
      const c = await tlsHealthz();
      expect(c.status).toBe('');
      a.socket.destroy();
      b.socket.destroy();
      expect(await cli.call('Heartbeat', {})).toMatchObject({ currentTime: expect.any(String) });
    } finally {
      await cli.close({ force: true });
    }
  });
});

describe('PostgreSQL statement_timeout (C4.12)', () => {
  it('every connection of the service carries DB_STATEMENT_TIMEOUT_MS; a longer statement is cancelled', async () => {
    const base = await createTestDb();
    if (base.kind === 'pglite') {
      // PGlite accepts the setting but never cancels (one in-process backend): the service does not pretend
      const svc = await createTestService({ db: base });
      expect((await sql<{ statement_timeout: string }>`show statement_timeout`.execute(svc.deps.db)).rows[0]!.statement_timeout).toBe('0');
      await svc.close();
      await base.close();
      return;
    }
    const handle = await createDb({ DATABASE_URL: base.url, DB_STATEMENT_TIMEOUT_MS: 700, poolSize: 3 });
    const svc = await createTestService({ db: { ...handle, url: base.url! } });
    try {
      const shows = await Promise.all(
        [1, 2, 3].map(() => sql<{ statement_timeout: string }>`show statement_timeout`.execute(svc.deps.db)),
      );
      expect(shows.map((r) => r.rows[0]!.statement_timeout)).toEqual(['700ms', '700ms', '700ms']);
      const err = await sql`select pg_sleep(3)`.execute(svc.deps.db).then(() => null, (e: { code?: string }) => e);
      expect(err?.code).toBe('57014'); // query_canceled
      // the connection stays usable
      expect((await sql<{ one: number }>`select 1 as one`.execute(svc.deps.db)).rows[0]!.one).toBe(1);
      // the default of a service built from the configuration: 30 s
      expect((await sql<{ statement_timeout: string }>`show statement_timeout`.execute(base.db)).rows[0]!.statement_timeout).toBe('30s');
    } finally {
      await svc.close();
      await handle.close();
      await base.close();
    }
  });
});
