// One central system for the OCPP benchmark, in its own process so its memory can be measured alone:
//   gateway — the real service (startService), PGlite in a temp DATA_DIR or a fresh database next to
//             DATABASE_URL, the bundled catalog, N chargers registered through registerOcppCharger;
//   bare    — the bare ocpp-rpc reference server (simulator/bare-server.ts) that only acknowledges.
// Talks to the parent over IPC: {type:'ready', url, csv} once listening; answers {cmd:'rss'} with
// {type:'rss', rss} (after a GC when --expose-gc is on); {cmd:'stop'} closes everything and exits.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBareServer } from '../simulator/bare-server.ts';
import { startClusterGateway, treeCpuUs, treeRss } from './cluster-gateway.ts';
import { freshDatabase } from './fresh-db.ts';

const kind = process.argv[2];
const count = Number(process.argv[3] ?? '100');
const prefix = process.argv[4] ?? 'BENCH-';
/** gateway: WORKERS of the service; above 1 the service runs as its own process tree (bench/cluster-gateway.ts) */
const workers = Number(process.argv[5] ?? '1');
if ((kind !== 'gateway' && kind !== 'bare') || !Number.isInteger(count) || count < 1) {
  process.stderr.write('usage: server-child.ts gateway|bare <count> [identity-prefix]\n');
  process.exit(2);
}
if (!process.send) {
  process.stderr.write('server-child.ts is started by bench/ocpp.bench.ts (IPC)\n');
  process.exit(2);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const send = (m: unknown) => process.send!(m);
const width = String(count).length;
const identities = Array.from({ length: count }, (_, i) => `${prefix}${String(i + 1).padStart(width, '0')}`);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `ere-bench-${kind}-`));
const csvPath = path.join(tmp, 'chargers.csv');

let stop: () => Promise<void> = async () => {};
/** gateway only: the periodic (or, with --idle-readings, clock-aligned) register readings it stored (to compare with what the driver saw acknowledged) */
let stored: () => Promise<{ count: number; wh_sum: string } | null> = async () => null;
/** CPU (µs) and memory (bytes) of the server: this process, or the clustered gateway's process tree */
let cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
let rss: () => Promise<number> = () => settledRss();

/**
 * BENCH_STATEMENTS=1 (bench:ocpp --statements, one gateway process): every SQL statement sent through node-postgres
 * is counted by its text (whitespace folded, first 90 characters), so the bench can say how many statements a
 * MeterValues or a reconnect costs and which.
 */
const statements = new Map<string, number>();
async function countStatements(): Promise<void> {
  const pg = (await import('pg')).default;
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : (first?.text ?? '(submittable)');
    const key = text.replace(/\s+/g, ' ').trim().slice(0, 90);
    statements.set(key, (statements.get(key) ?? 0) + 1);
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
}

async function startGateway(): Promise<{ url: string; db: string; database?: string }> {
  if (process.env.BENCH_STATEMENTS === '1' && workers === 1) await countStatements();
  const { loadConfig } = await import('../src/config.ts');
  const { startService } = await import('../src/main.ts');
  const { createLogger } = await import('../src/logger.ts');
  const { loadBundledCatalog } = await import('../src/domain/catalog/load.ts');
  const { createUser } = await import('../src/domain/credentials/tokens.ts');
  const { registerOcppCharger } = await import('../src/domain/chargers/register-ocpp-charger.ts');
  let pgDb: { url: string; name: string; drop: () => Promise<void> } | undefined;
  if (process.env.DATABASE_URL) pgDb = await freshDatabase(process.env.DATABASE_URL, 'ere_bench');
  if (workers > 1 && !pgDb) throw new Error('a gateway with several workers needs PostgreSQL (DATABASE_URL): PGlite is one process');
  const config = loadConfig({
    ...process.env,
    APP_ENV: 'sandbox',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: path.join(tmp, 'data'),
    DATABASE_URL: pgDb?.url,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'fatal',
    JOBS_ENABLED: 'false',
    ADMIN_TOKEN: crypto.randomBytes(16).toString('hex'),
  });
  const service = await startService({ config, logger: createLogger({ level: config.LOG_LEVEL }), listen: workers === 1, seed: false, jobs: false });
  await loadBundledCatalog(service.deps.db);
  const historyMonths = Number(process.env.BENCH_HISTORY_MONTHS ?? 0);
  if (historyMonths > 0) {
    const { addHistoryMonths } = await import('./history.ts');
    await addHistoryMonths(service.deps.db, historyMonths);
  }
  const { user_id } = await createUser(service.deps, { email: `bench-${Date.now()}@bench.invalid`, full_name: 'OCPP benchmark' });
  const lines = ['identity,password'];
  // a few at a time: a 50,000-charger fleet registers in minutes, not a quarter of an hour
  const credentials: string[] = new Array(identities.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < identities.length) {
        const i = next++;
        const identity = identities[i]!;
        const r = await registerOcppCharger(service.deps, { ownerUserId: user_id, nickname: `Bench ${identity}`, identity });
        credentials[i] = `${r.identity},${r.password}`;
      }
    }),
  );
  lines.push(...credentials);
  fs.writeFileSync(csvPath, lines.join('\n') + '\n');
  const { sql } = await import('kysely');
  const storedIn = async (db: import('../src/db/database.ts').Db) => {
    const r = await sql<{ count: string; wh_sum: string | null }>`
      select count(*)::text as count, sum(wh)::text as wh_sum from meter_readings
       where context in ('Sample.Periodic', 'Sample.Clock') and measurand = 'Energy.Active.Import.Register' and phase = ''`.execute(db);
    return { count: Number(r.rows[0]!.count), wh_sum: r.rows[0]!.wh_sum ?? '0' };
  };
  if (workers > 1) {
    const clustered = await startClusterGateway({ root, databaseUrl: pgDb!.url, workers, dataDir: path.join(tmp, 'data'), env: { ADMIN_TOKEN: config.ADMIN_TOKEN ?? '' } });
    cpuUs = () => treeCpuUs(clustered.pid);
    rss = async () => treeRss(clustered.pid);
    stored = () => storedIn(service.deps.db);
    stop = async () => {
      await clustered.stop();
      await service.stop();
      await pgDb?.drop();
    };
    return { url: clustered.url.replace(/^http/, 'ws') + '/ocpp', db: `PostgreSQL, ${workers} workers`, database: pgDb!.name };
  }
  stop = async () => {
    await service.stop();
    await pgDb?.drop();
  };
  stored = () => storedIn(service.deps.db);
  return { url: service.url.replace(/^http/, 'ws') + '/ocpp', db: pgDb ? 'PostgreSQL' : 'PGlite', ...(pgDb ? { database: pgDb.name } : {}) };
}

async function startBare(): Promise<{ url: string; db: string; database?: string }> {
  const server = await startBareServer({ record: false });
  fs.writeFileSync(csvPath, ['identity,password', ...identities.map((i) => `${i},`)].join('\n') + '\n');
  stop = () => server.close();
  return { url: server.url, db: 'none' };
}

/** RSS after two GCs a second apart (the JS heap settled), so before/after figures compare */
async function settledRss(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  await new Promise((r) => setTimeout(r, 1000));
  gc?.();
  return process.memoryUsage().rss;
}

process.on('message', (m: any) => {
  if (m?.cmd === 'rss') {
    void rss().then((bytes) => send({ type: 'rss', rss: bytes }));
  } else if (m?.cmd === 'cpu') {
    // user + system CPU of this process so far, in µs
    send({ type: 'cpu', us: cpuUs() });
  } else if (m?.cmd === 'statements') {
    send({ type: 'statements', statements: Object.fromEntries(statements) });
  } else if (m?.cmd === 'stored') {
    void stored().then(
      (r) => send({ type: 'stored', stored: r }),
      (err) => send({ type: 'stored', stored: null, error: (err as Error).message }),
    );
  } else if (m?.cmd === 'stop') {
    stop()
      .catch((err) => process.stderr.write(`server-child: stop failed: ${(err as Error).message}\n`))
      .finally(() => {
        fs.rmSync(tmp, { recursive: true, force: true });
        process.exit(0);
      });
  }
});
const shutdown = () => {
  void stop()
    .catch(() => {})
    .finally(() => {
      fs.rmSync(tmp, { recursive: true, force: true });
      process.exit(0);
    });
};
process.on('disconnect', shutdown);
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);

(kind === 'gateway' ? startGateway() : startBare()).then(
  ({ url, db, database }) => send({ type: 'ready', url, csv: csvPath, db, database }),
  (err) => {
    process.stderr.write(`server-child: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);
