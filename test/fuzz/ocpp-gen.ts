// OCPP frames for the fuzzer: a valid payload of every handled action of both versions (templates), mutated
// payloads, and frame-level garbage (not arrays, wrong message types, unknown and Object.prototype actions,
// duplicate ids, answers to calls never made, binary and oversized frames).
import { mutate, nastyValue, PROTO_NAMES, Raw, toJson, deepArray } from './json.ts';
import type { Prng } from './prng.ts';

export type Proto = 'ocpp1.6' | 'ocpp2.0.1';
const ts = () => new Date(Date.now() - 3_600_000).toISOString();
const sv16 = (v: unknown) => ({ value: String(v), measurand: 'Energy.Active.Import.Register', unit: 'Wh', context: 'Sample.Periodic' });
const sv201 = (v: unknown) => ({ value: v, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh', multiplier: 0 } });

// Garbage uses connector/EVSE 1 and transaction ids of its own, so the tracked readings (connector 2) are
// not closed or replaced by a garbage message that happens to be valid.
export function templates(p: Proto): Record<string, unknown> {
  if (p === 'ocpp1.6') {
    return {
      BootNotification: { chargePointVendor: 'Alfen BV', chargePointModel: 'NG910-60023', chargePointSerialNumber: 'SN', firmwareVersion: '1' },
      Heartbeat: {},
      StatusNotification: { connectorId: 1, errorCode: 'NoError', status: 'Charging', timestamp: ts() },
      Authorize: { idTag: 'TAG-1' },
      StartTransaction: { connectorId: 1, idTag: 'TAG-1', meterStart: 1000, timestamp: ts() },
      StopTransaction: { transactionId: 77, meterStop: 2000, timestamp: ts(), idTag: 'TAG-1', reason: 'Local', transactionData: [{ timestamp: ts(), sampledValue: [sv16(2000)] }] },
      MeterValues: { connectorId: 1, transactionId: 77, meterValue: [{ timestamp: ts(), sampledValue: [sv16(1500), { value: 'OCMF|{}|{}', format: 'SignedData' }] }] },
      DataTransfer: { vendorId: 'fuzz', messageId: 'm', data: 'd' },
      DiagnosticsStatusNotification: { status: 'Idle' },
      FirmwareStatusNotification: { status: 'Idle' },
    };
  }
  const tx = (eventType: string, seqNo: number) => ({
    eventType, timestamp: ts(), triggerReason: 'MeterValuePeriodic', seqNo, transactionInfo: { transactionId: 'GARBAGE-1', chargingState: 'Charging' },
    evse: { id: 1, connectorId: 1 }, idToken: { idToken: 'TAG-1', type: 'ISO14443' },
    meterValue: [{ timestamp: ts(), sampledValue: [sv201(1500), { value: 1, unitOfMeasure: { unit: 'kWh', multiplier: 3 }, signedMeterValue: { signedMeterData: 'x', signingMethod: 'ECDSA', encodingMethod: 'OCMF', publicKey: 'k' } }] }],
  });
  return {
    BootNotification: { reason: 'PowerUp', chargingStation: { vendorName: 'Alfen BV', model: 'NG910-60023', serialNumber: 'SN', firmwareVersion: '1' } },
    Heartbeat: {},
    StatusNotification: { timestamp: ts(), connectorStatus: 'Occupied', evseId: 1, connectorId: 1 },
    Authorize: { idToken: { idToken: 'TAG-1', type: 'ISO14443' } },
    TransactionEvent: tx('Updated', 1),
    TransactionEventStarted: tx('Started', 0),
    TransactionEventEnded: tx('Ended', 2),
    MeterValues: { evseId: 1, meterValue: [{ timestamp: ts(), sampledValue: [sv201(1500)] }] },
    DataTransfer: { vendorId: 'fuzz', messageId: 'm', data: { a: 1 } },
    NotifyEvent: { generatedAt: ts(), seqNo: 0, eventData: [] },
    SecurityEventNotification: { type: 'x', timestamp: ts() },
  };
}

/**
 * The inputs issue 10 names, aimed at the fields that carry them (a random mutation reaches them rarely): a 2.0.1
 * multiplier far outside −3…6, register values such as 1e21 or "1e21", NUL in an id tag.
 */
export function targeted(r: Prng, p: Proto, key: string, payload: unknown): unknown {
  const copy = structuredClone(payload) as Record<string, any>;
  const big = r.pick<unknown>([1e21, '1e21', -1e308, '1e999999', 1e-300, 2 ** 63, '99999999999999999999']);
  const nul = r.pick(['TAG\u0000', '\u0000', 'A\u0000B\u0000']);
  if (p === 'ocpp2.0.1') {
    const sv = copy.meterValue?.[0]?.sampledValue?.[0];
    if (sv && r.chance(0.6)) {
      if (r.chance(0.5)) sv.unitOfMeasure = { unit: 'Wh', multiplier: r.pick([2_000_000, 1e9, -1e9, 1e21, 7, -4]) };
      else sv.value = big;
    } else if (copy.idToken) copy.idToken.idToken = nul;
    return copy;
  }
  if (key === 'StartTransaction') r.chance(0.7) ? (copy.meterStart = big) : (copy.idTag = nul);
  else if (key === 'StopTransaction') r.chance(0.7) ? (copy.meterStop = big) : (copy.idTag = nul);
  else if (copy.meterValue?.[0]?.sampledValue?.[0]) copy.meterValue[0].sampledValue[0].value = String(big);
  else if ('idTag' in copy) copy.idTag = nul;
  return copy;
}

/** the action name a template key is sent as */
export const actionOf = (key: string) => (key.startsWith('TransactionEvent') ? 'TransactionEvent' : key);

/** an action name: mostly a handled one, sometimes unknown or an Object.prototype member */
export function pickAction(r: Prng, p: Proto): { action: string; payload: unknown } {
  const t = templates(p);
  const key = r.pick(Object.keys(t));
  const roll = r.next();
  const payload = r.chance(0.25) ? targeted(r, p, key, t[key]) : mutate(t[key], r, false);
  if (roll < 0.8) return { action: actionOf(key), payload };
  if (roll < 0.9) return { action: r.pick(PROTO_NAMES), payload };
  return { action: r.pick(['FooBar', 'heartbeat', 'Heartbeat ', 'Heartbeat\u0000', '', 'x'.repeat(300), 'Reset', 'GetVariables', 'Ünïcode']), payload };
}

export interface RawFrame {
  label: string;
  data: string | Buffer;
  binary?: boolean;
  /** the CALL's message id when the frame is a CALL the server should answer */
  id?: string;
  /** send the same frame twice (duplicate message id) */
  twice?: boolean;
  /** the CALLERROR codes the answer must carry (an action named after an Object.prototype member is unknown) */
  expectError?: string[];
}

export const NOT_HANDLED = ['NotImplemented', 'NotSupported'];

/** One frame of garbage for a raw socket. frameCap = the service's OCPP_MAX_FRAME_BYTES. */
export function rawFrame(r: Prng, p: Proto, n: number, frameCap: number): RawFrame {
  const id = `g${n}`;
  const roll = r.int(0, 99);
  if (roll < 45) {
    const t = templates(p);
    const key = r.pick(Object.keys(t));
    const payload = r.chance(0.25) ? targeted(r, p, key, t[key]) : mutate(t[key], r, true);
    return { label: `mutated ${key}`, data: toJson([2, id, actionOf(key), payload]), id };
  }
  if (roll < 52) {
    const action = r.pick([...PROTO_NAMES, 'FooBar', '', 'Heartbeat\u0000']);
    const expectError = PROTO_NAMES.includes(action) ? NOT_HANDLED : undefined;
    return { label: `action ${JSON.stringify(action)}`, data: toJson([2, id, action, r.chance(0.5) ? {} : nastyValue(r, true)]), id, ...(expectError ? { expectError } : {}) };
  }
  if (roll < 60) {
    const text = r.pick(['null', '{}', '"x"', '42', 'true', '', ' ', 'not json', '[2,"x","Heartbeat",{}', '[]', '[2]', '[2,"y"]',
      '[2,"z","Heartbeat"]', `[2,"${id}","Heartbeat",{},"extra"]`, '{"0":2,"1":"a","2":"Heartbeat","3":{}}', '\u0000', '[2,"a","Heartbeat",{}]\u0000',
      '[' + '['.repeat(10_000), deepArray(10_000).text, `[2,"${id}","Heartbeat",${deepArray(10_000).text}]`, `[2,"${id}","MeterValues",{"a":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}]`]);
    return { label: `not a frame ${JSON.stringify(text.slice(0, 30))}`, data: text };
  }
  if (roll < 68) {
    const type = r.pick([0, 1, 5, 9, -1, 2.5, 1e21, '2', null, [2], { x: 2 }]);
    const mid = r.pick([id, 123, null, '', 'x'.repeat(100), `${id}\u0000`, { id }, '__proto__']);
    return { label: `wrong type/id ${JSON.stringify([type, mid]).slice(0, 40)}`, data: toJson([type, mid, 'Heartbeat', {}]) };
  }
  if (roll < 74) {
    const target = r.pick(['never-made', '__proto__', 'constructor', '', id]);
    const data = r.chance(0.5) ? toJson([3, target, nastyValue(r, true)]) : toJson([4, target, r.pick(['GenericError', 'x', '']), nastyValue(r, true), {}]);
    return { label: `answer to a call never made (${target})`, data };
  }
  if (roll < 80) return { label: 'duplicate message id', data: toJson([2, id, 'Heartbeat', {}]), id, twice: true };
  if (roll < 86) {
    const b = r.chance(0.5) ? r.bytes(r.int(0, 2000)) : Buffer.from(toJson([2, id, 'Heartbeat', {}]));
    return { label: `binary frame (${b.length} bytes)`, data: b, binary: true };
  }
  if (roll < 90) {
    const many = Array.from({ length: r.pick([200, 500, 1000]) }, (_, i) => ({ timestamp: ts(), sampledValue: [{ value: String(1000 + i), unit: 'Wh' }] }));
    const payload = p === 'ocpp1.6' ? { connectorId: 1, transactionId: 77, meterValue: many } : { evseId: 1, meterValue: many };
    const data = toJson([2, id, 'MeterValues', payload]);
    return { label: `huge array (${data.length} bytes)`, data: data.length < frameCap ? data : toJson([2, id, 'Heartbeat', {}]), id };
  }
  if (roll < 92) return { label: `oversized frame (${frameCap + 10} bytes)`, data: toJson([2, id, 'DataTransfer', { vendorId: 'x', data: 'y'.repeat(frameCap) }]) };
  const s = r.str(r.int(1, 200), '[]{}",:0123456789.eE+-\\u\u0000 truefalsn');
  return { label: `random text ${JSON.stringify(s.slice(0, 20))}`, data: s };
}

/** a valid MeterValues-like frame with a known register value for the tracked transaction */
export function readingPayload(p: Proto, tx: string | number, at: string, wh: number, seqNo: number): { action: string; payload: unknown } {
  if (p === 'ocpp1.6') return { action: 'MeterValues', payload: { connectorId: 2, transactionId: tx, meterValue: [{ timestamp: at, sampledValue: [sv16(wh)] }] } };
  if (seqNo % 3 === 0) return { action: 'MeterValues', payload: { evseId: 2, meterValue: [{ timestamp: at, sampledValue: [sv201(wh)] }] } };
  return {
    action: 'TransactionEvent',
    payload: { eventType: 'Updated', timestamp: at, triggerReason: 'MeterValuePeriodic', seqNo, transactionInfo: { transactionId: String(tx) }, evse: { id: 2, connectorId: 1 }, meterValue: [{ timestamp: at, sampledValue: [sv201(wh)] }] },
  };
}

export { Raw };
