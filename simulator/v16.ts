// OCPP 1.6J of the simulated charge point: the messages it sends (BootNotification, StatusNotification,
// Authorize, StartTransaction / MeterValues / StopTransaction, sampled values with `unit`) and its answers to the
// central system (Reset, TriggerMessage, Change/GetConfiguration, RemoteStart/StopTransaction). The connection,
// the offline queue and the meter are the protocol-free core's (charge-point.ts).
import type { ChargePoint, ProtocolAdapter } from './charge-point.ts';
import { iso, whToKwhString, type Setting } from './charge-point-types.ts';

/** OCPP 1.6 security whitepaper: AuthorizationKey arrives hex-encoded; a value that is not hex is taken as is. */
function hexDecodedKey(value: string): string | undefined {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(value)) return value;
  const text = Buffer.from(value, 'hex').toString('utf8');
  return /^[\x21-\x7e]+$/.test(text) ? text : undefined;
}

export const v16: ProtocolAdapter = {
  heartbeatKey: 'HeartbeatInterval',
  meterIntervalKey: 'MeterValueSampleInterval',
  notSupported: 'NotSupported',

  settings: ({ connectors, vendor, model, meterS }) =>
    new Map<string, Setting>([
      ['HeartbeatInterval', { value: '300', readonly: false }],
      ['MeterValueSampleInterval', { value: meterS, readonly: false }],
      ['ClockAlignedDataInterval', { value: '0', readonly: false }],
      ['ConnectionTimeOut', { value: '60', readonly: false }],
      ['MeterValuesSampledData', { value: 'Energy.Active.Import.Register,Power.Active.Import', readonly: false }],
      ['StopTxnSampledData', { value: 'Energy.Active.Import.Register', readonly: false }],
      ['AuthorizeRemoteTxRequests', { value: 'false', readonly: false }],
      ['LocalAuthorizeOffline', { value: 'true', readonly: false }],
      ['LocalPreAuthorize', { value: 'false', readonly: false }],
      ['NumberOfConnectors', { value: String(connectors), readonly: true }],
      ['SupportedFeatureProfiles', { value: 'Core,RemoteTrigger', readonly: true }],
      ['ChargePointVendor', { value: vendor, readonly: true }],
      ['ChargePointModel', { value: model, readonly: true }],
    ]),

  bootRequest: (o) => ({
    chargePointVendor: o.vendor.slice(0, 20),
    chargePointModel: o.model.slice(0, 20),
    chargePointSerialNumber: o.serial.slice(0, 25),
    firmwareVersion: o.firmware.slice(0, 50),
  }),

  statusRequest: (connectorId, status, at) => ({ connectorId, errorCode: 'NoError', status, timestamp: iso(at) }),

  authorizeRequest: (idTag) => ({ idTag }),
  authorizeStatus: (res) => res?.idTagInfo?.status,

  energyValue: (v, f, context, phase, location = 'Outlet') => ({
    value: f.kwh ? whToKwhString(v) : String(v),
    context,
    measurand: 'Energy.Active.Import.Register',
    unit: f.label,
    location,
    ...(phase ? { phase } : {}),
  }),
  powerValue: (powerW, context) => ({ value: String(powerW), context, measurand: 'Power.Active.Import', unit: 'W', location: 'Outlet' }),

  idleMeterValues: (connectorId, mv) => ({ connectorId, meterValue: [mv] }),

  async begin(cp, tx, o) {
    const at = iso(o.at);
    await cp.call(
      'StartTransaction',
      () => ({ connectorId: tx.connectorId, idTag: tx.idTag, meterStart: tx.meterStartWh, timestamp: at }),
      (res) => {
        tx.transactionId = Number(res?.transactionId);
        tx.record.transactionId = String(res?.transactionId);
        tx.idTagStatus = res?.idTagInfo?.status;
      },
    );
  },

  async meter(cp, tx, mv) {
    const noTxId = tx.quirks.includes('no-txid');
    await cp.call('MeterValues', () => ({
      connectorId: tx.connectorId,
      ...(noTxId || tx.transactionId === null ? {} : { transactionId: tx.transactionId }),
      meterValue: [mv],
    }));
  },

  async end(cp, tx, wh, at, reason) {
    await cp.call('StopTransaction', () => ({
      // an offline-started transaction whose StartTransaction was never answered: -1, as chargers do
      transactionId: tx.transactionId ?? -1,
      idTag: tx.idTag,
      meterStop: wh,
      timestamp: iso(at),
      reason,
      ...(cp.opts.stopTransactionData ? { transactionData: [cp.meterValue(wh, at, 'Transaction.End', tx.quirks)] } : {}),
    }));
  },

  handle: (cp, method, p) => handle16(cp, method, p),
};

function handle16(cp: ChargePoint, method: string, p: any): Record<string, unknown> | undefined {
  switch (method) {
    case 'Reset':
      cp.after(() => cp.reboot(p?.type === 'Soft' ? 'Soft' : 'Hard'));
      return { status: 'Accepted' };
    case 'TriggerMessage': {
      const what = String(p?.requestedMessage);
      const connectorId = Number(p?.connectorId ?? 0);
      const connectors = connectorId > 0 ? [connectorId] : Array.from({ length: cp.opts.connectors }, (_, i) => i + 1);
      if (what === 'BootNotification') cp.after(() => cp.boot('Triggered'));
      else if (what === 'Heartbeat') cp.after(() => cp.heartbeat());
      else if (what === 'StatusNotification')
        cp.after(async () => {
          for (const c of connectors) await cp.statusNotification(c, cp.live.has(c) ? 'Charging' : 'Available');
        });
      else if (what === 'MeterValues')
        cp.after(async () => {
          for (const c of connectors) await cp.meterValuesIdle(c);
        });
      else if (what === 'DiagnosticsStatusNotification') cp.after(() => cp.send('DiagnosticsStatusNotification', { status: 'Idle' }));
      else if (what === 'FirmwareStatusNotification') cp.after(() => cp.send('FirmwareStatusNotification', { status: 'Idle' }));
      else return { status: 'NotImplemented' };
      return { status: 'Accepted' };
    }
    case 'ChangeConfiguration': {
      if (p?.key === 'AuthorizationKey') return { status: cp.adoptPassword(hexDecodedKey(String(p?.value))) };
      const entry = cp.settings.get(String(p?.key));
      if (!entry) return { status: 'NotSupported' };
      if (entry.readonly) return { status: 'Rejected' };
      const value = String(p?.value);
      if (/Interval$/.test(String(p?.key)) && !/^\d+$/.test(value)) return { status: 'Rejected' };
      entry.value = value;
      if (p?.key === 'HeartbeatInterval') cp.setHeartbeatInterval(Number(value));
      cp.settingChanged(String(p.key));
      return { status: 'Accepted' };
    }
    case 'GetConfiguration': {
      const keys: string[] | undefined = Array.isArray(p?.key) && p.key.length > 0 ? p.key : undefined;
      const known = keys ? keys.filter((k) => cp.settings.has(k)) : [...cp.settings.keys()];
      const unknown = keys ? keys.filter((k) => !cp.settings.has(k)) : [];
      return {
        configurationKey: known.map((key) => ({ key, readonly: cp.settings.get(key)!.readonly, value: cp.settings.get(key)!.value })),
        ...(unknown.length ? { unknownKey: unknown } : {}),
      };
    }
    case 'RemoteStartTransaction': {
      const connectorId = Number(p?.connectorId ?? 1);
      if (connectorId < 1 || connectorId > cp.opts.connectors || cp.live.has(connectorId)) return { status: 'Rejected' };
      cp.after(() => cp.startLiveSession({ connectorId, idTag: String(p?.idTag), trigger: 'RemoteStart' }));
      return { status: 'Accepted' };
    }
    case 'RemoteStopTransaction': {
      const c = cp.live.findByTxId(p?.transactionId);
      if (c === undefined) return { status: 'Rejected' };
      cp.after(() => cp.stopLiveSession(c, 'Remote'));
      return { status: 'Accepted' };
    }
    default:
      return undefined;
  }
}
