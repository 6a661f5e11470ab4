// Composition root: config → logger → db → migrations → http + ocpp on one server → jobs; graceful shutdown.
// The only file that wires things together. `npm start` runs it.
import cluster from 'node:cluster';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { runPrimary, workerCount } from './cluster.ts';
import { createDb, type DbHandle } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { createBus } from './db/bus.ts';
import { watchBusDelivery } from './db/bus-delivery.ts';
import { createDbClock } from './db/db-clock.ts';
import pg from 'pg';
import { databaseUnavailableError } from './http/db-unavailable.ts';
import type { Deps } from './deps.ts';
import { buildApp } from './http/app.ts';
import type { App, RouteRegistrar } from './http/types.ts';
import { loadBundledCatalog } from './domain/catalog/load.ts';
import { createCipher, encryptionKeyFile, previousKeys, resolveEncryptionKey } from './lib/iban-crypto.ts';
import { checkHostResolves, databaseFailure, listenFailure, reasonOf, StartFailure } from './lib/start-failure.ts';
import { verifyDataKey } from './domain/platform/data-key-check.ts';
import { verifyEnvironment } from './domain/platform/environment-check.ts';
import { sql } from 'kysely';
import { localParts } from './lib/amsterdam-time.ts';
import { createLogger } from './logger.ts';
import type { StartupState } from './lib/startup.ts';
import { attachOcpp, type OcppServerHandle } from './ocpp/server.ts';
import { jobRunsSettled, startScheduler, type SchedulerHandle } from './jobs/scheduler.ts';
import { ensureReadingPartitionsAtStart } from './jobs/partitions.job.ts';
import {
  formatDemoCredentials,
  seedSandbox,
  writeDemoCredentials,
  type DemoCredentials,
} from './domain/platform/seed.ts';
import { appPlugins } from './http/plugins/index.ts';
import { createEanRegister } from './domain/ean/register.ts';
import { createMailer } from './domain/invites/mailer.ts';
import { fileLimitWarning, openFileLimit } from './lib/file-limit.ts';

export interface Service {
  app: App;
  deps: Deps;
  url: string;
  /** C1.7: the demo credentials when this start seeded an empty sandbox database (else null) */
  demo: DemoCredentials | null;
  /** where the demo credentials were written (DATA_DIR/demo-credentials.json) */
  demoFile: string | null;
  stop(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  logger?: Logger;
  /** listen (default) or only build (tests that inject) */
  listen?: boolean;
  dbHandle?: DbHandle;
  seed?: boolean;
  jobs?: boolean;
  clock?: () => Date;
  /** add the bundled MID catalog entries the database lacks (C1.7, D209; both environments). Default true. */
  catalog?: boolean;
  /** extra route files registered after the service's own, before ready (tests declare routes this way) */
  extraRoutes?: RouteRegistrar[];
}

export async function startService(opts: StartOptions): Promise<Service> {
  const { config } = opts;
  const logger = opts.logger ?? createLogger({ level: config.LOG_LEVEL });
  const handle = opts.dbHandle ?? (await openDatabase(config));
  await migrate(handle.db);
  // D186 (C0.1): a database records its environment at the first start; a process of the other one stops here
  await verifyEnvironment(handle.db, config.APP_ENV);
  // D251: the current key encrypts; DATA_ENCRYPTION_KEYS_PREVIOUS only decrypt (a rotation)
  const cipher = createCipher(resolveEncryptionKey(config), previousKeys(config.DATA_ENCRYPTION_KEYS_PREVIOUS));
  // D153, D251: a process that lacks a key the database's data may be encrypted with stops here
  await verifyDataKey(handle.db, cipher, config.DATA_ENCRYPTION_KEY ? 'configured' : encryptionKeyFile(config.DATA_DIR));
  // /readyz: 503 until the end of this function (migrations are already applied here)
  const startup: StartupState = { step: 'creating the month partitions', complete: false };
  const metrics = new Registry();
  // D250: on PostgreSQL every process tells time by the database's clock (its own corrected by the measured offset),
  // so processes on machines whose clocks drifted agree on last_seen_at, expiries, ages and "from the future"
  const dbClock = !opts.clock && handle.kind === 'pg' ? createDbClock({ db: handle.db, logger, metrics }) : undefined;
  await dbClock?.sample();
  const deps: Deps = {
    config,
    db: handle.db,
    dbKind: handle.kind,
    logger,
    clock: opts.clock ?? dbClock?.now ?? (() => new Date()),
    metrics,
    cipher,
    bus: createBus(handle, logger),
    eanRegister: createEanRegister(config, handle.db),
    mailer: createMailer(config),
    startup,
  };
  // D191: a year without a configured RENEWABLE_SHARE is computed with the latest earlier year's share, silently
  const year = localParts(deps.clock()).year;
  if (!(year in config.RENEWABLE_SHARE)) {
    logger.warn(
      { year, configured: Object.keys(config.RENEWABLE_SHARE) },
      `RENEWABLE_SHARE has no share for ${year}: its ERE are computed with the latest earlier year's; add ${year}:<share> once it is published (C5.1)`,
    );
  }
  // D225: with WORKERS above 1 the primary has said it, once for the service (not once per worker and restart)
  if (!cluster.isWorker) warnIfMetricsOpen(config, logger);
  // D245: a serving process's events come back to it through the bus (not behind a transaction-mode pooler); checked
  // while the start goes on, awaited before it is complete; a bus that delivers nothing is logged, not a refusal
  const busCheck = opts.listen !== false && deps.bus ? watchBusDelivery({ bus: deps.bus, db: deps.db, metrics: deps.metrics, logger }) : undefined;
  // this month's and the coming months' meter_readings partitions exist before any charger is accepted; D245: a role
  // that may not create them is told what to do in one error line, and the start goes on
  await ensureReadingPartitionsAtStart(deps);
  startup.step = 'loading the catalog';
  if (opts.catalog ?? true) {
    const added = await loadBundledCatalog(deps.db);
    if (added.models || added.aliases) logger.info(added, 'loaded the bundled MID catalog');
  }
  const app = await buildApp(deps, { plugins: appPlugins, routes: opts.extraRoutes ?? [] });
  let ocpp: OcppServerHandle | undefined;
  let scheduler: SchedulerHandle | undefined;

  let url = config.PUBLIC_BASE_URL;
  if (opts.listen !== false) {
    await app.ready();
    ocpp = await attachOcpp(app.server, deps);
    deps.ocpp = ocpp.registry; // operator commands for this process's sockets
    const address = await app
      .listen({ port: config.PORT, host: config.HOST, backlog: config.LISTEN_BACKLOG })
      .catch((err: unknown) => Promise.reject(listenFailure(err, config.HOST, config.PORT)));
    url = config.PORT === 0 ? address.replace('0.0.0.0', '127.0.0.1') : config.PUBLIC_BASE_URL;
    // Port 0 (tests): the links the service hands out must name the port it really got.
    if (config.PORT === 0 && config.PUBLIC_BASE_URL.endsWith(':0')) {
      deps.config = Object.freeze({ ...config, PUBLIC_BASE_URL: url });
    }
  }

  // C1.7: after listen, so the links in the demo credentials name the real address. Secrets go to the file
  // and to the caller (main prints them once), never to the log.
  let demo: DemoCredentials | null = null;
  let demoFile: string | null = null;
  if (opts.seed ?? config.APP_ENV === 'sandbox') {
    startup.step = 'seeding the sandbox';
    demo = await seedSandbox(deps);
    if (demo) {
      demoFile = writeDemoCredentials(deps.config.DATA_DIR, demo);
      logger.info({ file: demoFile }, 'seeded the sandbox with demo credentials');
    }
  }
  if (opts.listen !== false && (opts.jobs ?? true) && config.JOBS_ENABLED) scheduler = startScheduler(deps);
  if (busCheck) {
    startup.step = 'checking the event bus';
    await busCheck;
  }
  startup.step = 'complete';
  startup.complete = true;

  let stopped = false;
  return {
    app,
    deps,
    url,
    demo,
    demoFile,
    async stop() {
      if (stopped) return;
      stopped = true;
      startup.stopping = true;
      // D169: no job runs on a closed database: the scheduled runs and those started through POST /admin/jobs/:job/run
      // end first (the outbox delivery ends after the message in flight, its SMTP waits bounded)
      await scheduler?.stop();
      await jobRunsSettled(deps);
      await ocpp?.close();
      delete deps.ocpp;
      await closeGracefully(app);
      await deps.bus?.close();
      deps.mailer?.close();
      dbClock?.stop();
      await handle.close();
    },
  };
}

/** D218: GET /metrics stays open without METRICS_TOKEN (a scraper on a private network needs none), but production says so. */
function warnIfMetricsOpen(config: Config, logger: Logger): void {
  if (config.APP_ENV !== 'production' || config.METRICS_TOKEN) return;
  logger.warn(
    { event: 'metrics.open' },
    'METRICS_TOKEN is not set: GET /metrics answers anyone who reaches the service (request counts and durations by route, job runs, the e-mail outbox, connected chargers by protocol, process memory and CPU); set METRICS_TOKEN (16 characters or more) and give the scraper Authorization: Bearer <METRICS_TOKEN>, or keep /metrics off the public network at the proxy',
  );
}

/**
 * D151: the database of DATABASE_URL (or the PGlite data dir), tried once before the migrations: a server that is
 * unreachable, a database that does not exist, SSL or a login refused stop the start with one line naming the key.
 */
async function openDatabase(config: Config): Promise<DbHandle> {
  let handle: DbHandle | undefined;
  try {
    handle = await createDb(config);
    await sql`select 1`.execute(handle.db);
    return handle;
  } catch (err) {
    await handle?.close().catch(() => undefined);
    if (err instanceof StartFailure) throw err;
    if (config.DATABASE_URL) throw databaseFailure(err);
    throw new StartFailure('DATA_DIR', `cannot open the embedded database in ${config.DATA_DIR}: ${reasonOf(err)}`, { cause: err });
  }
}

/**
 * D245: a database error after the database was opened (a migration, the partitions, the catalog, the seed: a role
 * without CREATE on the schema answers 42501) is one line naming DATABASE_URL with PostgreSQL's message and code, as
 * `npm run migrate` says it; the cause goes to the debug log. Anything else that is not a StartFailure (a bug) keeps
 * its stack.
 */
function startFailureOf(config: Config, err: unknown): StartFailure | undefined {
  if (err instanceof StartFailure) return err;
  if (config.DATABASE_URL && (err instanceof pg.DatabaseError || databaseUnavailableError(err))) return databaseFailure(err);
  return undefined;
}

/** Longest wait for in-flight requests at shutdown before their connections are cut. */
export const SHUTDOWN_GRACE_MS = 25_000;

/**
 * app.close() stops accepting and waits for in-flight requests. A keep-alive connection whose request finishes
 * while we close would still hold server.close() open, so idle connections are closed as they appear, and after
 * SHUTDOWN_GRACE_MS every connection is cut.
 */
async function closeGracefully(app: App): Promise<void> {
  const server = app.server;
  const idle = setInterval(() => server.closeIdleConnections(), 100);
  const hard = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
  try {
    await app.close();
  } finally {
    clearInterval(idle);
    clearTimeout(hard);
  }
}

/** How long an uncaught error waits for a clean stop before the process exits anyway. */
export const CRASH_STOP_MS = 5_000;

/**
 * uncaughtException / unhandledRejection: log fatal with the stack, try to stop the service cleanly within
 * CRASH_STOP_MS, then exit(1) so a supervisor (docker-compose restart policy, systemd) starts a fresh process.
 */
function onUncaughtError(logger: Logger, stop: () => Promise<void> | undefined): void {
  let crashing = false;
  const crash = (kind: string) => (err: unknown) => {
    logger.fatal({ err, kind }, `${kind}: stopping the service`);
    if (crashing) return;
    crashing = true;
    process.exitCode = 1;
    setTimeout(() => process.exit(1), CRASH_STOP_MS);
    Promise.resolve()
      .then(stop)
      .then(
        () => logger.fatal({ kind }, 'stopped after an uncaught error; exiting with 1'),
        (e: unknown) => logger.fatal({ err: e }, 'the stop after an uncaught error failed; exiting with 1'),
      )
      .finally(() => process.exit(1));
  };
  process.on('uncaughtException', crash('uncaughtException'));
  process.on('unhandledRejection', crash('unhandledRejection'));
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger({ level: config.LOG_LEVEL });
  const workers = workerCount(config.WORKERS);
  if (workers > 1 && cluster.isPrimary) {
    warnIfMetricsOpen(config, logger); // D225: once for the service; the workers do not repeat it
    runPrimary(workers, logger);
    return;
  }

  // Signal handlers first: a SIGTERM that arrives while the service is still starting waits for the start
  // to finish and then stops it cleanly (exit 0), instead of killing the process mid-migration.
  let service: Service | undefined;
  let stopRequested: string | undefined;
  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (!service) {
      stopRequested = signal;
      return;
    }
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, 'shutting down');
    try {
      await service.stop();
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // C4.10: an error nothing caught leaves the process in an unknown state: log it, stop, exit 1 (the supervisor restarts)
  onUncaughtError(logger, () => service?.stop());

  try {
    // D151: a host name that does not resolve stops the start before the data dir or the database is touched
    await checkHostResolves(config.HOST);
    service = await startService({ config, logger });
  } catch (err) {
    const failure = startFailureOf(config, err);
    if (!failure) throw err;
    logger.debug({ err: failure.cause ?? failure }, 'the start failed');
    console.error(failure.message);
    process.exit(1);
  }
  const base = service.deps.config.PUBLIC_BASE_URL; // with PORT=0, the port the service really got
  const ocppUrl = base.replace(/^http/, 'ws') + '/ocpp/<identity>';
  logger.info({ url: base, ocpp: ocppUrl, env: config.APP_ENV }, 'ere-gateway listening');
  const files = fileLimitWarning(config, openFileLimit());
  if (files) {
    logger.warn(
      { openFileLimit: files.limit, maxSockets: files.sockets },
      'the limit on open files is below OCPP_MAX_CONNECTIONS + HTTP_MAX_CONNECTIONS: the process runs out of files before the caps refuse anyone; raise the limit (ulimit -n, LimitNOFILE) or lower the caps',
    );
  }
  const banner = [
    '',
    `  ere-gateway (${config.APP_ENV}) on ${service.deps.dbKind === 'pg' ? 'PostgreSQL' : 'embedded PGlite'}`,
    `  API:     ${base}   (docs: ${base}/docs)`,
    `  OCPP:    ${ocppUrl}`,
    '',
  ];
  // issue 10: PGlite promises less than a PostgreSQL server after a crash (docs/reliability.md)
  if (service.deps.dbKind === 'pglite') banner.splice(2, 0, '  Embedded PGlite is for trials and development; run production on PostgreSQL (DATABASE_URL).');
  // The demo secrets appear here once, at the first start, and in DATA_DIR/demo-credentials.json.
  if (service.demo && service.demoFile) banner.push(formatDemoCredentials(service.demo, service.demoFile));
  process.stdout.write(banner.join('\n') + '\n');
  if (stopRequested) await shutdown(stopRequested);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
