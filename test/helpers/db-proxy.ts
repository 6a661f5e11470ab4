// A cuttable TCP proxy between a service (or one of its connections) and PostgreSQL: `cut()` destroys every
// proxied socket and drops new ones at once, `restore()` lets them through again; `delayMs` holds everything the
// client sends that long before passing it on (a slow network to the database). For the database-fault tests.
import net from 'node:net';
import { createDb } from '../../src/db/database.ts';
import { createTestDb, type TestDb } from './db.ts';

/** A cuttable TCP proxy to the database of `url`; returns the proxied URL. */
export async function dbProxy(url: string, opts: { delayMs?: number } = {}) {
  const u = new URL(url);
  const hostParam = u.searchParams.get('host');
  const port = Number(u.port || 5432);
  const upstream = hostParam?.startsWith('/') ? { path: `${hostParam}/.s.PGSQL.${port}` } : { host: u.hostname || '127.0.0.1', port };
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) return void client.destroy();
    const up = net.connect(upstream);
    for (const s of [client, up]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    up.pipe(client);
    const delay = opts.delayMs ?? 0;
    if (delay > 0) client.on('data', (chunk: Buffer) => setTimeout(() => up.destroyed || up.write(chunk), delay));
    else client.pipe(up);
    client.on('close', () => up.destroy());
    up.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.searchParams.delete('host');
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

/**
 * A test database reached two ways: `direct`, and `viaProxy` (a pool of `poolSize` through a cuttable proxy), which a
 * test service takes as its database so that the test can cut the service off PostgreSQL. `close` ends all three.
 */
export async function proxiedDatabase(poolSize: number) {
  const direct = await createTestDb();
  const proxy = await dbProxy(direct.url!);
  const handle = await createDb({ DATABASE_URL: proxy.url, poolSize });
  return {
    direct,
    proxy,
    viaProxy: { ...handle, url: proxy.url } as TestDb,
    async close() {
      proxy.restore();
      await handle.close();
      await proxy.close();
      await direct.close();
    },
  };
}
