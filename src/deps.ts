// The small deps object every domain function and route receives (ARCHITECTURE.md: db, clock, config, logger).
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from './config.ts';
import type { Db } from './db/database.ts';
import type { Bus } from './db/bus.ts';
import type { Cipher } from './lib/iban-crypto.ts';

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
  /** events between processes over PostgreSQL LISTEN/NOTIFY (src/db/bus.ts); absent in a bare test deps */
  bus?: Bus;
  /** Area services attach here (EAN register, mailer, OCPP live registry, ...), keyed by area. */
  services: Services;
}

/** Each area adds its optional service under its own key. */
export interface Services {
  [key: string]: unknown;
}
