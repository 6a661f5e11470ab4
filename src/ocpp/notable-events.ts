// D137: what a charger reports about itself that an operator must be able to find: a fault (a StatusNotification
// Faulted, or with an error code other than NoError), a security event (tampering, a failed firmware check), a failed
// firmware update or log upload. The gateway acts on none of these; it logs each at `warn` with the charger's own
// words, capped (C4.10), so an operator's log search finds them. Only these actions are looked at.
// D242: per charger and report (its action and the status, error code or type it names), the first in a minute is
// logged and the repeats are counted, with one closing line when the minute ends: a charger whose fault flaps
// (Faulted, Available, Faulted, ... a tripping RCD) or that repeats a security event wrote a line each time, and a
// fleet's firmware bug made the log of thousands of chargers unreadable. A new fault of the same charger (another
// error code or connector) is a new key, so it is logged at once.
import type { Logger } from 'pino';
import { ThrottledLog } from '../lib/throttled-log.ts';

const cap = (v: unknown, max = 200) => (typeof v === 'string' ? (v.length > max ? v.slice(0, max) + '…' : v) : typeof v === 'number' ? v : undefined);
const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

const FIRMWARE_FAILED = new Set(['DownloadFailed', 'InstallationFailed', 'InstallVerificationFailed', 'InvalidSignature', 'SignatureVerified_Failed', 'InstallRebooting_Failed']);
const UPLOAD_FAILED = new Set(['UploadFailed', 'BadMessage', 'NotSupportedOperation', 'PermissionDenied', 'AcceptedCanceled']);

/** Actions whose content may be notable (a Set lookup per message is all the rest cost). */
export const NOTABLE_ACTIONS = new Set([
  'StatusNotification',
  'SecurityEventNotification',
  'FirmwareStatusNotification',
  'SignedFirmwareStatusNotification',
  'DiagnosticsStatusNotification',
  'LogStatusNotification',
]);

/** Keys remembered in one interval; past this, newcomers share one key per action (bounded memory and lines). */
export const NOTABLE_LOG_MAX_KEYS = 10_000;

const perLogger = new WeakMap<Logger, ThrottledLog>();
const throttleOf = (logger: Logger): ThrottledLog => {
  let t = perLogger.get(logger);
  if (!t) perLogger.set(logger, (t = new ThrottledLog(logger, undefined, NOTABLE_LOG_MAX_KEYS)));
  return t;
};

export function logNotable(logger: Logger, chargerId: string, protocol: string, method: string, params: unknown): void {
  const p = obj(params);
  const who = { event: 'ocpp.charger_report', chargerId, protocol, action: method };
  const report = (fields: Record<string, unknown>, what: unknown, msg: string) => {
    const log = throttleOf(logger);
    const closing = (whose: Record<string, unknown>) => (suppressed: number) => ({
      level: 'warn' as const,
      fields: { event: 'ocpp.charger_report_suppressed', ...whose, action: method, suppressed, intervalSeconds: log.intervalMs / 1000 },
      msg: 'ocpp: a charger repeated a report in the last interval (the first was logged)',
    });
    log.log(
      `${chargerId}\n${method}\n${String(what)}`,
      { level: 'warn', fields: { ...who, ...fields }, msg },
      closing({ chargerId, protocol, report: fields }),
      { key: `*\n${method}`, closing: closing({ otherChargers: true }) },
    );
  };
  switch (method) {
    case 'StatusNotification': {
      const status = p.status ?? p.connectorStatus;
      const errorCode = p.errorCode;
      if (status !== 'Faulted' && (errorCode === undefined || errorCode === 'NoError')) return;
      const fields = { connectorId: cap(p.connectorId), evseId: cap(p.evseId), status: cap(status), errorCode: cap(errorCode), info: cap(p.info), vendorErrorCode: cap(p.vendorErrorCode) };
      report(fields, [fields.connectorId, fields.evseId, fields.status, fields.errorCode, fields.vendorErrorCode].join('/'), 'ocpp: the charger reports a fault');
      return;
    }
    case 'SecurityEventNotification': {
      const fields = { type: cap(p.type), timestamp: cap(p.timestamp), techInfo: cap(p.techInfo) };
      report(fields, fields.type, 'ocpp: the charger reports a security event');
      return;
    }
    case 'FirmwareStatusNotification':
    case 'SignedFirmwareStatusNotification':
      if (typeof p.status === 'string' && FIRMWARE_FAILED.has(p.status)) report({ status: cap(p.status) }, p.status, 'ocpp: the charger reports a failed firmware update');
      return;
    case 'DiagnosticsStatusNotification':
    case 'LogStatusNotification':
      if (typeof p.status === 'string' && UPLOAD_FAILED.has(p.status)) report({ status: cap(p.status) }, p.status, 'ocpp: the charger reports a failed upload');
      return;
  }
}

/** Ends the interval of `logger`'s report throttle now (its closing lines written), e.g. for a test. */
export function flushNotable(logger: Logger): void {
  perLogger.get(logger)?.flush();
}

/** At a clean stop: the repeats not told yet are told, and the throttle's timer stops. */
export function closeNotable(logger: Logger): void {
  perLogger.get(logger)?.close();
  perLogger.delete(logger);
}
