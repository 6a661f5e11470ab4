// The deps object every domain function and route receives: db, clock, config, logger, and the few services of this
// process, each a typed field built in src/main.ts (startService).
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from './config.ts';
import type { Db } from './db/database.ts';
import type { Bus } from './db/bus.ts';
import type { Cipher } from './lib/iban-crypto.ts';
import type { StartupState } from './lib/startup.ts';
import type { EanRegister } from './domain/ean/register.ts';
import type { Mailer } from './domain/invites/mailer.ts';
import type { LiveRegistry } from './ocpp/live-registry.ts';

export type Clock = () => Date;

export interface Deps {
  config: Config;
  db: Db;
  dbKind: 'pg' | 'pglite';
  logger: Logger;
  clock: Clock;
  /** prom-client registry of this service instance (GET /metrics); areas add their metrics to it */
  metrics: Registry;
  /** IBAN encryption (C0.6) */
  cipher: Cipher;
  /** events between processes over PostgreSQL LISTEN/NOTIFY (src/db/bus.ts) */
  bus?: Bus;
  /** the EAN register of this process (C2.7): the HTTP adapter when EAN_REGISTER_URL is set, else the table-backed one */
  eanRegister: EanRegister;
  /** SMTP delivery of the outbox; null without SMTP_URL (mail then waits in the outbox) */
  mailer: Mailer | null;
  /** this process's OCPP sockets, while its OCPP server is attached (operator commands are executed through it) */
  ocpp?: LiveRegistry;
  /** start-up progress: GET /readyz answers 200 only once it is complete */
  startup: StartupState;
}
