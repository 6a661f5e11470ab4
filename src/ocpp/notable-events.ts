// D137: what a charger reports about itself that an operator must be able to find: a fault (a StatusNotification
// Faulted, or with an error code other than NoError), a security event (tampering, a failed firmware check), a failed
// firmware update or log upload. The gateway acts on none of these; it logs each at `warn` with the charger's own
// words, capped (C4.10), so an operator's log search finds them. Only these actions are looked at.
import type { Logger } from 'pino';

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

export function logNotable(logger: Logger, chargerId: string, protocol: string, method: string, params: unknown): void {
  const p = obj(params);
  const who = { event: 'ocpp.charger_report', chargerId, protocol, action: method };
  switch (method) {
    case 'StatusNotification': {
      const status = p.status ?? p.connectorStatus;
      const errorCode = p.errorCode;
      if (status !== 'Faulted' && (errorCode === undefined || errorCode === 'NoError')) return;
      logger.warn(
        { ...who, connectorId: cap(p.connectorId), evseId: cap(p.evseId), status: cap(status), errorCode: cap(errorCode), info: cap(p.info), vendorErrorCode: cap(p.vendorErrorCode) },
        'ocpp: the charger reports a fault',
      );
      return;
    }
    case 'SecurityEventNotification':
      logger.warn({ ...who, type: cap(p.type), timestamp: cap(p.timestamp), techInfo: cap(p.techInfo) }, 'ocpp: the charger reports a security event');
      return;
    case 'FirmwareStatusNotification':
    case 'SignedFirmwareStatusNotification':
      if (typeof p.status === 'string' && FIRMWARE_FAILED.has(p.status)) logger.warn({ ...who, status: cap(p.status) }, 'ocpp: the charger reports a failed firmware update');
      return;
    case 'DiagnosticsStatusNotification':
    case 'LogStatusNotification':
      if (typeof p.status === 'string' && UPLOAD_FAILED.has(p.status)) logger.warn({ ...who, status: cap(p.status) }, 'ocpp: the charger reports a failed upload');
      return;
  }
}
