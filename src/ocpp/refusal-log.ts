// D219: refused OCPP upgrades are counted, and their log lines bounded. A charger retrying with a wrong password, an
// identity that is not registered, a capacity refusal or a handshake timeout repeats, often several times a second:
// one warn line each was the flood and nothing counted them. Every refusal now counts in
// `ocpp_handshake_refused_total{reason}` (a fixed set of reasons, never the identity or address: a charger cannot
// add series), and per (reason, identity, or the address when there is no identity) the first refusal of an interval
// is logged at once and the rest are only counted; when the interval ends one line says how many were not logged,
// the way the quarantine budget logs once an hour (quarantine-refusals.ts).
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import { ThrottledLog } from '../lib/throttled-log.ts';

/** Every reason the upgrade path gives (edge.ts, charger-auth.ts, server.ts); anything else is counted as `other`. */
export const REFUSAL_REASONS = [
  // edge.ts: the request itself
  'bad_upgrade',
  'bad_subprotocol',
  'not_found',
  'bad_encoding',
  'bad_identity',
  // charger-auth.ts: who the charger is
  'unknown_identity',
  'no_password',
  'basic_user_mismatch',
  'bad_authorization',
  'wrong_password',
  'client_cert_missing',
  'client_cert_untrusted',
  'client_cert_cn_mismatch',
  'no_subprotocol',
  'unsupported_subprotocol',
  // server.ts: this process
  'capacity',
  'handshake_timeout',
  'auth_error',
] as const;

const KNOWN = new Set<string>(REFUSAL_REASONS);

/** The reason's label: one of REFUSAL_REASONS, else `other`. */
export const reasonLabel = (reason: string): string => (KNOWN.has(reason) ? reason : 'other');

/** One interval of the log: a key's first refusal in it is logged, the others are counted for the closing line. */
export const REFUSAL_LOG_INTERVAL_MS = 60_000;
/**
 * Keys remembered in one interval (the map is emptied when it ends). Past this, a new key shares one entry per reason
 * with the other newcomers, so a flood of distinct identities holds at most this many entries and writes at most this
 * many lines (plus one per reason) an interval.
 */
export const REFUSAL_LOG_MAX_KEYS = 10_000;

export class RefusalLog {
  private readonly log: ThrottledLog;

  constructor(
    logger: Logger,
    private readonly counter: Counter<'reason'>,
    intervalMs = REFUSAL_LOG_INTERVAL_MS,
    maxKeys = REFUSAL_LOG_MAX_KEYS,
  ) {
    // every reason is a series from the start, so a rate over a fresh process reads 0 rather than nothing
    for (const reason of [...REFUSAL_REASONS, 'other']) counter.inc({ reason }, 0);
    this.log = new ThrottledLog(logger, intervalMs, maxKeys);
  }

  /** Counts one refusal; logs it when it is its key's first in this interval. Never the password or the header. */
  refused(status: number, reason: string, identity: string | undefined, remoteAddress: string | undefined): void {
    const label = reasonLabel(reason);
    this.counter.inc({ reason: label });
    const closing = (who: Record<string, unknown>) => (suppressed: number) => ({
      level: 'warn' as const,
      fields: { event: 'ocpp.refuse_suppressed', status, reason, ...who, suppressed, intervalSeconds: this.log.intervalMs / 1000 },
      msg: 'ocpp: upgrade refusals not logged in the last interval (the first of each was)',
    });
    this.log.log(
      `${reason}\n${identity === undefined ? `a:${remoteAddress ?? ''}` : `i:${identity}`}`,
      { level: 'warn', fields: { event: 'ocpp.refuse', status, reason, identity, remoteAddress }, msg: 'ocpp: upgrade refused' },
      closing({ identity, remoteAddress }),
      { key: `${label}\n*`, closing: closing({ otherKeys: true }) },
    );
  }

  /** the keys remembered in this interval (at most the cap and one shared key per reason) */
  get keys(): number {
    return this.log.keys;
  }

  /** The interval ends: one line per key with refusals not logged, then every key is forgotten. */
  flush(): void {
    this.log.flush();
  }

  /** At shutdown: what was not logged yet is told, and the timer stops. */
  close(): void {
    this.log.close();
  }
}
