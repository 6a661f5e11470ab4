// OCPP lanes of the fuzzer: one charger each, sending garbage interleaved with well-formed readings of a known
// register value on its own transaction (connector/EVSE 2). A raw lane writes frames itself (`ws`); an RPC
// lane sends mutated payloads through a real ocpp-rpc RPCClient. Every answer is checked as it arrives.
import WebSocket from 'ws';
import { RPCClient } from 'ocpp-rpc';
import type { RPC_ClientOptions } from 'ocpp-rpc/lib/client.js';
import { NOT_HANDLED, pickAction, rawFrame, readingPayload, templates, type Proto } from './ocpp-gen.ts';
import { PROTO_NAMES } from './json.ts';
import type { Prng } from './prng.ts';

export interface Reading { chargerId: string; at: string; wh: number; acked: boolean; via: string }
export interface Finding { kind: string; input: string; symptom: string }
export interface LaneCtx {
  wsBase: string;
  charger: { chargerId: string; identity: string; password: string };
  proto: Proto;
  r: Prng;
  cases: number;
  frameCap: number;
  findings: Finding[];
  readings: Reading[];
  stats: { frames: number; reconnects: number; callErrors: number; slowestMs: number; slowest: string };
}

// SQL, driver and stack text that must never reach a charger (C4.11)
const LEAK = /\n\s+at |\bat [\w$.<>]+ \(|node_modules|\.[tj]s:\d+|relation "|syntax error|violates|\bpg\b|postgres|SQLSTATE|invalid input syntax|for type (bigint|integer|numeric|jsonb|timestamp)|duplicate key|column "|byte sequence|unicode escape|is not a function|cannot read propert|TypeError|RangeError|ReferenceError|call stack/i;

export function checkCallError(ctx: LaneCtx, input: string, code: unknown, description: unknown, details: unknown): void {
  ctx.stats.callErrors++;
  const text = `${String(description)} ${JSON.stringify(details ?? {})}`;
  if (LEAK.test(text)) ctx.findings.push({ kind: 'callerror-leak', input, symptom: `${String(code)}: ${text.slice(0, 300)}` });
}

// an OCPP answer later than a charger's usual call timeout (30 s) is a hang: the charger has given up on it
const HANG_MS = 30_000;
const T0 = Math.floor(Date.now() / 1000) * 1000 - 2 * 3_600_000;
const at = (k: number) => new Date(T0 + k * 1000).toISOString().replace('.000Z', 'Z');
const BASE_WH = 100_000;
const whAt = (k: number) => BASE_WH + 5 * k; // 5 Wh a second: 18 kW, a plausible step

export async function runRawLane(ctx: LaneCtx): Promise<void> {
  const { r, proto, charger } = ctx;
  let ws!: WebSocket;
  const waiting = new Map<string, (msg: unknown[] | 'closed') => void>();
  let last = '';
  const expected = new Map<string, { input: string; codes: string[] }>();
  const connect = async () => {
    ws = new WebSocket(`${ctx.wsBase}/ocpp/${charger.identity}`, [proto], {
      headers: { Authorization: `Basic ${Buffer.from(`${charger.identity}:${charger.password}`).toString('base64')}` },
      maxPayload: 64 * 1024 * 1024,
    });
    ws.on('message', (data) => {
      let msg: unknown;
      try { msg = JSON.parse(data.toString()); } catch { ctx.findings.push({ kind: 'bad-frame-from-server', input: last, symptom: data.toString().slice(0, 200) }); return; }
      if (!Array.isArray(msg)) return;
      if (msg[0] === 4) checkCallError(ctx, last, msg[2], msg[3], msg[4]);
      const e = expected.get(String(msg[1]));
      if (e && (msg[0] === 3 || msg[0] === 4)) {
        expected.delete(String(msg[1]));
        if (msg[0] !== 4 || !e.codes.includes(String(msg[2]))) ctx.findings.push({ kind: 'wrong-answer', input: e.input, symptom: `answered ${JSON.stringify(msg).slice(0, 200)}, expected a CALLERROR ${e.codes.join('/')}` });
      }
      const w = waiting.get(String(msg[1]));
      if (w) { waiting.delete(String(msg[1])); w(msg); }
    });
    ws.on('close', () => { for (const w of waiting.values()) w('closed'); waiting.clear(); });
    ws.on('error', () => {});
    await new Promise<void>((res, rej) => { ws.once('open', () => res()); ws.once('error', rej); ws.once('unexpected-response', (_q, resp) => rej(new Error(`upgrade answered ${resp.statusCode}`))); });
  };
  const send = (text: string | Buffer, id: string | undefined, binary = false) =>
    new Promise<unknown[] | 'closed' | 'timeout'>((res) => {
      if (ws.readyState !== WebSocket.OPEN) return res('closed');
      const timer = id ? setTimeout(() => { waiting.delete(id); res('timeout'); }, HANG_MS) : undefined;
      if (id) waiting.set(id, (m) => { clearTimeout(timer); res(m); });
      ctx.stats.frames++;
      ws.send(text, { binary });
      if (!id) res([]);
    });
  const call = async (id: string, action: string, payload: unknown) => send(JSON.stringify([2, id, action, payload]), id);
  const ensure = async () => {
    if (ws?.readyState === WebSocket.OPEN) return;
    if (ws) ctx.stats.reconnects++;
    await connect();
    const boot = await call(`boot${ctx.stats.reconnects}`, 'BootNotification', templates(proto).BootNotification);
    if (!Array.isArray(boot) || boot[0] !== 3) throw new Error(`boot after connect answered ${JSON.stringify(boot)}`);
  };
  const tx = await startTx(ctx, async (action, payload) => { await ensure(); return answerOf(await call(`tx0`, action, payload)); });
  for (let k = 1; k <= ctx.cases; k++) {
    await ensure();
    if (r.chance(0.2)) {
      const { action, payload } = readingPayload(proto, tx, at(k), whAt(k), k);
      const a = await call(`rd${k}`, action, payload);
      ctx.readings.push({ chargerId: charger.chargerId, at: at(k), wh: whAt(k), acked: Array.isArray(a) && a[0] === 3, via: `raw ${action} #${k}` });
      if (a === 'timeout') ctx.findings.push({ kind: 'hang', input: `${action} reading #${k}`, symptom: `no answer within ${HANG_MS} ms` });
      continue;
    }
    const f = rawFrame(r, proto, k, ctx.frameCap);
    last = `${proto} raw case #${k}: ${f.label}: ${(typeof f.data === 'string' ? f.data : f.data.toString('base64')).slice(0, 300)}`;
    if (f.expectError && f.id) expected.set(f.id, { input: last, codes: f.expectError });
    const t = performance.now();
    await send(f.data, undefined, f.binary);
    if (f.twice) await send(f.data, undefined, f.binary);
    const s = await call(`s${k}`, 'Heartbeat', {});
    const ms = performance.now() - t;
    if (ms > ctx.stats.slowestMs) { ctx.stats.slowestMs = ms; ctx.stats.slowest = last; }
    if (s === 'timeout') ctx.findings.push({ kind: 'hang', input: last, symptom: `the Heartbeat after it got no answer within ${HANG_MS} ms` });
  }
  await ensure();
  await stopTx(ctx, tx, async (action, payload) => answerOf(await call('stop', action, payload)));
  ws.close();
}

export async function runRpcLane(ctx: LaneCtx): Promise<void> {
  const { r, proto, charger } = ctx;
  let cli: RPCClient | undefined;
  let lastResult: unknown;
  let lastErrorCode = '';
  const ensure = async () => {
    if (cli && cli.state === 1) return;
    if (cli) ctx.stats.reconnects++;
    cli = new RPCClient({ endpoint: `${ctx.wsBase}/ocpp`, identity: charger.identity, password: Buffer.from(charger.password), protocols: [proto], reconnect: false, strictMode: false, callTimeoutMs: HANG_MS } as unknown as RPC_ClientOptions);
    await cli.connect();
    await cli.call('BootNotification', templates(proto).BootNotification);
  };
  const call = async (input: string, action: string, payload: unknown): Promise<'ok' | 'error' | 'closed'> => {
    await ensure();
    ctx.stats.frames++;
    try {
      lastResult = await cli!.call(action, payload);
      return 'ok';
    } catch (err) {
      const e = err as { rpcErrorCode?: string; message?: string; details?: unknown; name?: string };
      if (e.name === 'TimeoutError') ctx.findings.push({ kind: 'hang', input, symptom: `no answer within ${HANG_MS} ms` });
      else if (e.rpcErrorCode) { lastErrorCode = e.rpcErrorCode; checkCallError(ctx, input, e.rpcErrorCode, e.message, e.details); return 'error'; }
      return 'closed';
    }
  };
  const tx = await startTx(ctx, async (action, payload) => ((await call(`start ${action}`, action, payload)) === 'ok' ? (lastResult ?? true) : false));
  for (let k = 1; k <= ctx.cases; k++) {
    if (r.chance(0.2)) {
      const { action, payload } = readingPayload(proto, tx, at(k), whAt(k), k);
      const ok = (await call(`${action} reading #${k}`, action, payload)) === 'ok';
      ctx.readings.push({ chargerId: charger.chargerId, at: at(k), wh: whAt(k), acked: ok, via: `rpc ${action} #${k}` });
      continue;
    }
    const { action, payload } = pickAction(r, proto);
    const input = `${proto} rpc case #${k}: ${JSON.stringify(action)} ${JSON.stringify(payload)?.slice(0, 300)}`;
    const t = performance.now();
    const outcome = await call(input, action, payload);
    if (PROTO_NAMES.includes(action) && outcome !== 'closed' && !(outcome === 'error' && NOT_HANDLED.includes(lastErrorCode))) {
      ctx.findings.push({ kind: 'wrong-answer', input, symptom: `answered ${outcome} ${lastErrorCode}, expected a CALLERROR ${NOT_HANDLED.join('/')}` });
    }
    const ms = performance.now() - t;
    if (ms > ctx.stats.slowestMs) { ctx.stats.slowestMs = ms; ctx.stats.slowest = input; }
  }
  await stopTx(ctx, tx, async (action, payload) => (await call(`stop ${action}`, action, payload)) === 'ok');
  await cli?.close({ force: true });
}

type Caller = (action: string, payload: unknown) => Promise<boolean | unknown>;
const answerOf = (a: unknown[] | 'closed' | 'timeout') => (Array.isArray(a) && a[0] === 3 ? (a[2] ?? true) : false);

/** the tracked transaction on connector/EVSE 2, with its start reading at k = 0 */
async function startTx(ctx: LaneCtx, send: Caller): Promise<string | number> {
  const id = ctx.charger.chargerId;
  if (ctx.proto === 'ocpp1.6') {
    const a = await send('StartTransaction', { connectorId: 2, idTag: 'FUZZ', meterStart: whAt(0), timestamp: at(0) });
    const txId = a && typeof a === 'object' ? (a as { transactionId?: unknown }).transactionId : undefined;
    ctx.readings.push({ chargerId: id, at: at(0), wh: whAt(0), acked: Boolean(a), via: 'StartTransaction' });
    if (typeof txId !== 'number') throw new Error(`StartTransaction answered ${JSON.stringify(a)}`);
    return txId;
  }
  const txId = `FZ-${ctx.charger.identity}`;
  const ok = await send('TransactionEvent', {
    eventType: 'Started', timestamp: at(0), triggerReason: 'CablePluggedIn', seqNo: 0, transactionInfo: { transactionId: txId }, evse: { id: 2, connectorId: 1 },
    meterValue: [{ timestamp: at(0), sampledValue: [{ value: whAt(0), context: 'Transaction.Begin', unitOfMeasure: { unit: 'Wh' } }] }],
  });
  ctx.readings.push({ chargerId: id, at: at(0), wh: whAt(0), acked: Boolean(ok), via: 'TransactionEvent Started' });
  return txId;
}

async function stopTx(ctx: LaneCtx, tx: string | number, send: Caller): Promise<void> {
  const k = ctx.cases + 1;
  const ok = ctx.proto === 'ocpp1.6'
    ? await send('StopTransaction', { transactionId: tx, meterStop: whAt(k), timestamp: at(k), idTag: 'FUZZ', reason: 'Local' })
    : await send('TransactionEvent', {
      eventType: 'Ended', timestamp: at(k), triggerReason: 'EVCommunicationLost', seqNo: k, transactionInfo: { transactionId: String(tx), stoppedReason: 'EVDisconnected' }, evse: { id: 2, connectorId: 1 },
      meterValue: [{ timestamp: at(k), sampledValue: [{ value: whAt(k), context: 'Transaction.End', unitOfMeasure: { unit: 'Wh' } }] }],
    });
  ctx.readings.push({ chargerId: ctx.charger.chargerId, at: at(k), wh: whAt(k), acked: Boolean(ok), via: ctx.proto === 'ocpp1.6' ? 'StopTransaction' : 'TransactionEvent Ended' });
}
