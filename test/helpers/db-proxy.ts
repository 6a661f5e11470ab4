// A cuttable TCP proxy between a service (or one of its connections) and PostgreSQL: `cut()` destroys every
// proxied socket and drops new ones at once, `restore()` lets them through again; `delayMs` holds everything the
// client sends that long before passing it on (a slow network to the database); `blackhole()`/`heal()`,
// `deadServer()` and `orphan(port)` fail silently as a bad network does. For the database-fault tests.
import net from 'node:net';
import { createDb, type DbOptions } from '../../src/db/database.ts';
import { createTestDb, type TestDb } from './db.ts';

/**
 * A cuttable TCP proxy to the database of `url`; returns the proxied URL.
 * D263-D265: besides cutting, it can fail the way a bad network does, without telling either side:
 *  - `blackhole()` holds every byte both ways, on open connections and on new ones (accepted, never answered), as a
 *    network that drops packets; `heal()` delivers what was held and forwards again, as TCP's retransmission would.
 *  - `deadServer()` closes PostgreSQL's side of every open connection and leaves the service's side open and silent
 *    (what it sends disappears, nothing comes back): a server that vanished; new connections work.
 *  - `orphan(port)` resets the service's side of the one connection whose upstream local port is `port`
 *    (pg_stat_activity.client_port of its backend) and leaves PostgreSQL's side open and silent: a NAT or firewall
 *    that dropped the connection's state; the backend never hears of it.
 */
export async function dbProxy(url: string, opts: { delayMs?: number } = {}) {
  const u = new URL(url);
  const hostParam = u.searchParams.get('host');
  const port = Number(u.port || 5432);
  const upstream = hostParam?.startsWith('/') ? { path: `${hostParam}/.s.PGSQL.${port}` } : { host: u.hostname || '127.0.0.1', port };
  interface Pair {
    client: net.Socket;
    up: net.Socket;
    /** bytes held while blackholed, per direction */
    toUp: Buffer[];
    toClient: Buffer[];
    /** nothing goes through any more, and neither side's end closes the other */
    silent: boolean;
  }
  const pairs = new Set<Pair>();
  let cut = false;
  let blackholed = false;
  const forward = (pair: Pair, to: 'up' | 'client', chunk: Buffer) => {
    if (pair.silent) return;
    if (blackholed) {
      (to === 'up' ? pair.toUp : pair.toClient).push(chunk);
      return;
    }
    const dest = to === 'up' ? pair.up : pair.client;
    if (!dest.destroyed) dest.write(chunk);
  };
  const server = net.createServer((client) => {
    if (cut) return void client.destroy();
    const up = net.connect(upstream);
    const pair: Pair = { client, up, toUp: [], toClient: [], silent: false };
    pairs.add(pair);
    for (const s of [client, up]) s.on('error', () => {});
    up.on('data', (chunk: Buffer) => forward(pair, 'client', chunk));
    const delay = opts.delayMs ?? 0;
    client.on('data', (chunk: Buffer) => (delay > 0 ? setTimeout(() => forward(pair, 'up', chunk), delay) : forward(pair, 'up', chunk)));
    client.on('close', () => {
      if (!pair.silent) up.destroy();
      if (up.destroyed) pairs.delete(pair);
    });
    up.on('close', () => {
      if (!pair.silent) client.destroy();
      if (client.destroyed) pairs.delete(pair);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.searchParams.delete('host');
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as net.AddressInfo).port);
  const destroyAll = () => {
    for (const p of pairs) {
      p.client.destroy();
      p.up.destroy();
    }
    pairs.clear();
  };
  return {
    url: proxied.toString(),
    cut() {
      cut = true;
      destroyAll();
    },
    restore() {
      cut = false;
    },
    blackhole() {
      blackholed = true;
    },
    heal() {
      blackholed = false;
      for (const p of pairs) {
        for (const c of p.toUp.splice(0)) forward(p, 'up', c);
        for (const c of p.toClient.splice(0)) forward(p, 'client', c);
      }
    },
    deadServer() {
      for (const p of pairs) {
        p.silent = true;
        p.up.destroy();
      }
    },
    /** true when a connection with that upstream local port was found */
    orphan(upstreamPort: number): boolean {
      for (const p of pairs) {
        if (p.up.localPort !== upstreamPort) continue;
        p.silent = true;
        p.client.resetAndDestroy();
        return true;
      }
      return false;
    },
    /** ends every connection, the silent ones too */
    reset: destroyAll,
    close: () => {
      destroyAll();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A test database reached two ways: `direct`, and `viaProxy` (a pool of `poolSize` through a cuttable proxy), which a
 * test service takes as its database so that the test can cut the service off PostgreSQL. `close` ends all three.
 */
export async function proxiedDatabase(poolSize: number, opts: Omit<DbOptions, 'DATABASE_URL' | 'poolSize'> = {}) {
  const direct = await createTestDb();
  const proxy = await dbProxy(direct.url!);
  const handle = await createDb({ ...opts, DATABASE_URL: proxy.url, poolSize });
  return {
    direct,
    proxy,
    viaProxy: { ...handle, url: proxy.url } as TestDb,
    async close() {
      proxy.restore();
      proxy.heal();
      await handle.close();
      await proxy.close();
      await direct.close();
    },
  };
}
