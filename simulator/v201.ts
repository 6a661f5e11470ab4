// OCPP 2.0.1 of the simulated charge point: the messages it sends (BootNotification with a reason,
// StatusNotification per EVSE, Authorize with an idToken, TransactionEvent Started/Updated/Ended with seqNo,
// sampled values with `unitOfMeasure`) and its answers to the central system (Reset, TriggerMessage,
// Set/GetVariables, RequestStart/StopTransaction). The connection, the offline queue and the meter are the
// protocol-free core's (charge-point.ts).
import type { ChargePoint, ProtocolAdapter } from './charge-point.ts';
import { iso, whToKwhString, type Setting, type StopReason } from './charge-point-types.ts';

/** 1.6 status names, as the core reports them, on 2.0.1's connector statuses */
const CONNECTOR_STATUS: Record<string, string> = {
  Available: 'Available',
  Preparing: 'Occupied',
  Charging: 'Occupied',
  SuspendedEV: 'Occupied',
  SuspendedEVSE: 'Occupied',
  Finishing: 'Occupied',
  Unavailable: 'Unavailable',
  Faulted: 'Faulted',
  Reserved: 'Reserved',
};

/** the core's stop reason as [triggerReason, stoppedReason] */
const STOPPED: Record<StopReason, [string, string]> = {
  Local: ['StopAuthorized', 'Local'],
  Remote: ['RemoteStop', 'Remote'],
  HardReset: ['ResetCommand', 'ImmediateReset'],
  SoftReset: ['ResetCommand', 'ImmediateReset'],
  EVDisconnected: ['EVCommunicationLost', 'EVDisconnected'],
  // the start's answer did not accept the id token (StopTxOnInvalidId)
  DeAuthorized: ['Deauthorized', 'DeAuthorized'],
};

export const v201: ProtocolAdapter = {
  heartbeatKey: 'OCPPCommCtrlr.HeartbeatInterval',
  meterIntervalKey: 'SampledDataCtrlr.TxUpdatedInterval',
  notSupported: 'NotImplemented',

  settings: ({ connectors, vendor, model, meterS }) =>
    new Map<string, Setting>([
      ['OCPPCommCtrlr.HeartbeatInterval', { value: '300', readonly: false }],
      ['OCPPCommCtrlr.OfflineThreshold', { value: '60', readonly: false }],
      ['SampledDataCtrlr.TxUpdatedInterval', { value: meterS, readonly: false }],
      ['SampledDataCtrlr.TxUpdatedMeasurands', { value: 'Energy.Active.Import.Register,Power.Active.Import', readonly: false }],
      ['AlignedDataCtrlr.Interval', { value: '0', readonly: false }],
      ['AuthCtrlr.AuthorizeRemoteStart', { value: 'false', readonly: false }],
      ['TxCtrlr.EVConnectionTimeOut', { value: '60', readonly: false }],
      ['ChargingStation.Model', { value: model, readonly: true }],
      ['ChargingStation.VendorName', { value: vendor, readonly: true }],
      ['EVSE.Count', { value: String(connectors), readonly: true }],
    ]),

  bootRequest: (o, reason) => ({
    reason,
    chargingStation: {
      vendorName: o.vendor.slice(0, 50),
      model: o.model.slice(0, 20),
      serialNumber: o.serial.slice(0, 25),
      firmwareVersion: o.firmware.slice(0, 50),
    },
  }),

  statusRequest: (connectorId, status, at) => ({
    timestamp: iso(at),
    connectorStatus: CONNECTOR_STATUS[status] ?? 'Available',
    evseId: connectorId,
    connectorId: 1,
  }),

  authorizeRequest: (idTag) => ({ idToken: { idToken: idTag, type: 'ISO14443' } }),
  authorizeStatus: (res) => res?.idTokenInfo?.status,

  energyValue: (v, f, context, phase, location = 'Outlet') => ({
    value: f.kwh ? Number(whToKwhString(v)) : v,
    context,
    measurand: 'Energy.Active.Import.Register',
    location,
    unitOfMeasure: { unit: f.label },
    ...(phase ? { phase } : {}),
  }),
  powerValue: (powerW, context) => ({ value: powerW, context, measurand: 'Power.Active.Import', location: 'Outlet', unitOfMeasure: { unit: 'W' } }),

  idleMeterValues: (connectorId, mv) => ({ evseId: connectorId, meterValue: [mv] }),

  async begin(cp, tx, o) {
    tx.transactionId = tx.localId;
    tx.record.transactionId = tx.localId;
    const seqNo = tx.seqNo++;
    await cp.call('TransactionEvent', () => ({
      eventType: 'Started',
      timestamp: iso(o.at),
      triggerReason: o.trigger ?? 'Authorized',
      seqNo,
      transactionInfo: {
        transactionId: tx.localId,
        chargingState: 'Charging',
        ...(o.remoteStartId !== undefined ? { remoteStartId: o.remoteStartId } : {}),
      },
      evse: { id: tx.connectorId, connectorId: 1 },
      idToken: { idToken: tx.idTag, type: 'ISO14443' },
      meterValue: [cp.meterValue(tx.meterStartWh, o.at, 'Transaction.Begin', tx.quirks)],
    }), (res) => {
      tx.idTagStatus = res?.idTokenInfo?.status;
    });
  },

  async meter(cp, tx, mv, at, context) {
    // a TransactionEvent the central system asked for (TriggerMessage) is one, whatever the firmware's quirk
    const triggered = context === 'Trigger';
    if (tx.quirks.includes('no-txid') && !triggered) {
      await cp.call('MeterValues', () => ({ evseId: tx.connectorId, meterValue: [mv] }));
      return;
    }
    const seqNo = tx.seqNo++;
    await cp.call('TransactionEvent', () => ({
      eventType: 'Updated',
      timestamp: iso(at),
      triggerReason: triggered ? 'Trigger' : 'MeterValuePeriodic',
      seqNo,
      transactionInfo: { transactionId: tx.localId, chargingState: 'Charging' },
      evse: { id: tx.connectorId, connectorId: 1 },
      meterValue: [mv],
    }));
  },

  async end(cp, tx, wh, at, reason) {
    const [triggerReason, stoppedReason] = STOPPED[reason];
    const seqNo = tx.seqNo++;
    await cp.call('TransactionEvent', () => ({
      eventType: 'Ended',
      timestamp: iso(at),
      triggerReason,
      seqNo,
      transactionInfo: { transactionId: tx.localId, chargingState: 'Idle', stoppedReason },
      evse: { id: tx.connectorId, connectorId: 1 },
      idToken: { idToken: tx.idTag, type: 'ISO14443' },
      meterValue: [cp.meterValue(wh, at, 'Transaction.End', tx.quirks)],
    }));
  },

  handle: (cp, method, p) => handle201(cp, method, p),
};

/** SetVariables / GetVariables address a component.variable; a component none of whose variables we know is unknown */
function lookup(cp: ChargePoint, d: any) {
  const component = { name: String(d?.component?.name) };
  const variable = { name: String(d?.variable?.name) };
  const key = `${component.name}.${variable.name}`;
  const known = [...cp.settings.keys()].some((k) => k.startsWith(component.name + '.'));
  return { component, variable, key, known, entry: cp.settings.get(key) };
}

function setVariable(cp: ChargePoint, d: any): Record<string, unknown> {
  const { component, variable, key, known, entry } = lookup(cp, d);
  if (key === 'SecurityCtrlr.BasicAuthPassword' && (!d?.attributeType || d.attributeType === 'Actual')) {
    return { attributeStatus: cp.adoptPassword(String(d?.attributeValue)), component, variable };
  }
  let attributeStatus = 'Accepted';
  if (!known) attributeStatus = 'UnknownComponent';
  else if (!entry) attributeStatus = 'UnknownVariable';
  else if (d?.attributeType && d.attributeType !== 'Actual') attributeStatus = 'NotSupportedAttributeType';
  else if (entry.readonly) attributeStatus = 'Rejected';
  else {
    entry.value = String(d?.attributeValue);
    if (key === 'OCPPCommCtrlr.HeartbeatInterval') cp.setHeartbeatInterval(Number(entry.value));
    cp.settingChanged(key);
  }
  return { attributeStatus, component, variable, ...(d?.attributeType ? { attributeType: d.attributeType } : {}) };
}

function getVariable(cp: ChargePoint, d: any): Record<string, unknown> {
  const { component, variable, known, entry } = lookup(cp, d);
  if (!known) return { attributeStatus: 'UnknownComponent', component, variable };
  if (!entry) return { attributeStatus: 'UnknownVariable', component, variable };
  return { attributeStatus: 'Accepted', attributeValue: entry.value, component, variable };
}

function trigger(cp: ChargePoint, p: any): Record<string, unknown> {
  const what = String(p?.requestedMessage);
  const evseId = Number(p?.evse?.id ?? 0);
  const evses = evseId > 0 ? [evseId] : Array.from({ length: cp.opts.connectors }, (_, i) => i + 1);
  if (what === 'BootNotification') cp.after(() => cp.boot('Triggered'));
  else if (what === 'Heartbeat') cp.after(() => cp.heartbeat());
  else if (what === 'StatusNotification')
    cp.after(async () => {
      for (const c of evses) await cp.statusNotification(c, cp.live.has(c) ? 'Charging' : 'Available');
    });
  else if (what === 'MeterValues')
    cp.after(async () => {
      for (const c of evses) await cp.meterValuesIdle(c);
    });
  else if (what === 'TransactionEvent') {
    const sessions = evses.flatMap((c) => cp.live.get(c) ?? []);
    if (sessions.length === 0) return { status: 'Rejected' };
    cp.after(async () => {
      // triggerReason Trigger, context Trigger (OCPP 2.0.1 F06): not a periodic sample
      for (const s of sessions) await cp.txMeter(s.tx, s.tx.lastWh, cp.now(), s.powerW, 'Trigger');
    });
  } else if (what === 'FirmwareStatusNotification') cp.after(() => cp.send('FirmwareStatusNotification', { status: 'Idle' }));
  else if (what === 'LogStatusNotification') cp.after(() => cp.send('LogStatusNotification', { status: 'Idle' }));
  else return { status: 'NotImplemented' };
  return { status: 'Accepted' };
}

function handle201(cp: ChargePoint, method: string, p: any): Record<string, unknown> | undefined {
  switch (method) {
    case 'Reset': {
      if (p?.type === 'OnIdle' && cp.live.size > 0) {
        cp.after(async () => {
          await cp.live.idle();
          await cp.reboot('Immediate');
        });
        return { status: 'Scheduled' };
      }
      cp.after(() => cp.reboot('Immediate'));
      return { status: 'Accepted' };
    }
    case 'TriggerMessage':
      return trigger(cp, p);
    case 'SetVariables': {
      const data: any[] = Array.isArray(p?.setVariableData) ? p.setVariableData : [];
      return { setVariableResult: data.map((d) => setVariable(cp, d)) };
    }
    case 'GetVariables': {
      const data: any[] = Array.isArray(p?.getVariableData) ? p.getVariableData : [];
      return { getVariableResult: data.map((d) => getVariable(cp, d)) };
    }
    case 'RequestStartTransaction': {
      const evseId = Number(p?.evseId ?? 1);
      if (evseId < 1 || evseId > cp.opts.connectors || cp.live.has(evseId)) return { status: 'Rejected' };
      cp.after(() =>
        cp.startLiveSession({
          connectorId: evseId,
          idTag: String(p?.idToken?.idToken ?? 'REMOTE'),
          trigger: 'RemoteStart',
          ...(p?.remoteStartId !== undefined ? { remoteStartId: Number(p.remoteStartId) } : {}),
        }),
      );
      return { status: 'Accepted' };
    }
    case 'RequestStopTransaction': {
      const c = cp.live.findByTxId(p?.transactionId);
      if (c === undefined) return { status: 'Rejected' };
      cp.after(() => cp.stopLiveSession(c, 'Remote'));
      return { status: 'Accepted' };
    }
    default:
      return undefined;
  }
}
