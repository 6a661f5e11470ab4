// OCPP test helpers: a registered charger and a real ocpp-rpc client connected (and booted) to the service.
import { RPCClient } from 'ocpp-rpc';
import type { RPC_ClientOptions } from 'ocpp-rpc/lib/client.js';
import { registerOcppCharger } from '../../src/domain/chargers/register-ocpp-charger.ts';
import type { TestService } from './app.ts';

export type OcppProtocol = 'ocpp1.6' | 'ocpp2.0.1';

export interface TestCharger {
  chargerId: string;
  identity: string;
  password: string;
}

let n = 0;

export async function anOcppCharger(
  svc: TestService,
  user: { userId: string },
  opts: { nickname?: string; identity?: string; accountId?: string | null } = {},
): Promise<TestCharger> {
  const r = await registerOcppCharger(svc.deps, {
    ownerUserId: user.userId,
    nickname: opts.nickname ?? `Charger ${++n}`,
    identity: opts.identity ?? `CP-${process.pid}-${Date.now().toString(36)}-${++n}`,
    accountId: opts.accountId ?? null,
  });
  return { chargerId: r.charger_id, identity: r.identity, password: r.password };
}

export function ocppUrl(svc: TestService): string {
  return svc.url.replace(/^http/, 'ws') + '/ocpp';
}

/** A client with the given subprotocols (none: []); not yet connected. */
export function ocppClient(svc: TestService, identity: string, password: string, protocols: string[], extra: Partial<RPC_ClientOptions> = {}) {
  return new RPCClient({
    endpoint: ocppUrl(svc),
    identity,
    password: Buffer.from(password),
    protocols,
    reconnect: false,
    strictMode: false,
    callTimeoutMs: 5000,
    ...extra,
  } as RPC_ClientOptions);
}

export const ALFEN = { vendor: 'Alfen BV', model: 'NG910-60023' };

export function bootPayload(protocol: OcppProtocol, vendor = ALFEN.vendor, model = ALFEN.model, serial = 'SN-1') {
  return protocol === 'ocpp1.6'
    ? { chargePointVendor: vendor, chargePointModel: model, chargePointSerialNumber: serial, firmwareVersion: '6.1.0' }
    : { reason: 'PowerUp', chargingStation: { vendorName: vendor, model, serialNumber: serial, firmwareVersion: '6.1.0' } };
}

/** Connects and sends BootNotification; returns the client (close it in the test). */
export async function connectCharger(
  svc: TestService,
  charger: { identity: string; password: string },
  protocol: OcppProtocol,
  opts: { boot?: boolean; vendor?: string; model?: string } = {},
): Promise<RPCClient> {
  const cli = ocppClient(svc, charger.identity, charger.password, [protocol]);
  await cli.connect();
  if (opts.boot ?? true) {
    const res = (await cli.call('BootNotification', bootPayload(protocol, opts.vendor, opts.model))) as { status: string };
    if (res.status !== 'Accepted') throw new Error(`boot answered ${res.status}`);
  }
  return cli;
}

/** A 1.6 or 2.0.1 sampled energy register value. */
export function energyValue(protocol: OcppProtocol, timestamp: string, wh: number | string, extra: Record<string, unknown> = {}) {
  return protocol === 'ocpp1.6'
    ? { timestamp, sampledValue: [{ value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh', ...extra }] }
    : { timestamp, sampledValue: [{ value: Number(wh), measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' }, ...extra }] };
}

/** An ISO timestamp in whole seconds, as chargers send them. */
export const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A timeline that starts an hour ago (whole seconds): `at(min)` is the timestamp `min` minutes after T0. */
export function hourAgoTimeline(): { T0: number; at: (min: number) => string } {
  const T0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
  return { T0, at: (min) => isoSeconds(T0 + min * 60_000) };
}

/** A new charger of `user`, connected and booted for `fn`, closed afterwards (also when `fn` throws). */
export async function withConnectedCharger(
  svc: TestService,
  user: { userId: string },
  protocol: OcppProtocol,
  fn: (cli: RPCClient, ch: TestCharger) => Promise<void>,
): Promise<TestCharger> {
  const ch = await anOcppCharger(svc, user);
  const cli = await connectCharger(svc, ch, protocol);
  try {
    await fn(cli, ch);
  } finally {
    await cli.close();
  }
  return ch;
}

/** Retries `check` every 20 ms until it passes or `ms` have passed (then its last error is thrown). */
export async function eventually<T>(check: () => T | Promise<T>, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** Writes the service's pending last_seen_at notes now (the OCPP edge writes them every 250 ms). */
export async function flushSeen(svc: TestService): Promise<void> {
  await svc.deps.ocpp!.flushSeen();
}
