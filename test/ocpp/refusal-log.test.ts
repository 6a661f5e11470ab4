// D219: refused upgrades are counted by reason (`ocpp_handshake_refused_total{reason}`) and logged once per reason and
// identity (or address) an interval, with one closing line saying how many were not logged. D221: every line says
// which process wrote it.
import os from 'node:os';
import pino from 'pino';
import { Counter, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { RefusalLog } from '../../src/ocpp/refusal-log.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger } from '../helpers/ocpp-factories.ts';
import { logSink, rawUpgrade } from '../helpers/raw-upgrade.ts';

const basic = (identity: string, password: string) => 'Basic ' + Buffer.from(`${identity}:${password}`).toString('base64');

async function refusedTotal(svc: TestService, reason: string): Promise<number> {
  const metric = svc.deps.metrics.getSingleMetric('ocpp_handshake_refused_total');
  if (!metric) return -1;
  return (await metric.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

describe('D219: refused upgrades through the service', () => {
  const log = logSink();
  let svc: TestService;
  let user: { userId: string; token: string };
  let closed = false;

  beforeAll(async () => {
    svc = await createTestService({ listen: true, logger: createLogger({ level: 'info', destination: log.sink }) });
    user = await aUser(svc.deps);
  });
  afterAll(async () => {
    if (!closed) await svc.close();
  });

  const refusals = (identity: string) => log.lines.filter((l) => l.event === 'ocpp.refuse' && l.identity === identity);

  it('many wrong passwords of one charger write one line and count every one; another charger and another reason get their own line', async () => {
    const a = await anOcppCharger(svc, user);
    const b = await anOcppCharger(svc, user);
    const before = await refusedTotal(svc, 'wrong_password');
    for (let i = 0; i < 20; i++) {
      expect((await rawUpgrade(svc.url, `/ocpp/${a.identity}`, { authorization: basic(a.identity, `wrong-${i}`) })).status).toBe(401);
    }
    expect(await refusedTotal(svc, 'wrong_password')).toBe(before + 20);
    // the first refusal is logged at once, with the fields an operator reads, and says which process wrote it (D221)
    expect(refusals(a.identity)).toEqual([
      expect.objectContaining({
        level: 40,
        status: 401,
        reason: 'wrong_password',
        remoteAddress: expect.stringContaining('127.0.0.1'),
        pid: process.pid,
        hostname: os.hostname(),
        service: 'ere-gateway',
      }),
    ]);

    for (let i = 0; i < 3; i++) await rawUpgrade(svc.url, `/ocpp/${b.identity}`, { authorization: basic(b.identity, 'wrong') });
    expect(refusals(b.identity)).toEqual([expect.objectContaining({ status: 401, reason: 'wrong_password' })]);
    // the same charger refused for another reason is another key
    await rawUpgrade(svc.url, `/ocpp/${a.identity}`, {});
    expect(refusals(a.identity).map((l) => l.reason)).toEqual(['wrong_password', 'no_password']);
    expect(await refusedTotal(svc, 'wrong_password')).toBe(before + 23);
    expect(await refusedTotal(svc, 'no_password')).toBeGreaterThanOrEqual(1);
  });

  it('an unknown identity is counted every time and logged once; the counter has no identity label', async () => {
    const before = await refusedTotal(svc, 'unknown_identity');
    for (let i = 0; i < 5; i++) {
      expect((await rawUpgrade(svc.url, '/ocpp/NOT-REGISTERED-D219', { authorization: basic('NOT-REGISTERED-D219', 'pw') })).status).toBe(401);
    }
    expect(await refusedTotal(svc, 'unknown_identity')).toBe(before + 5);
    expect(refusals('NOT-REGISTERED-D219')).toHaveLength(1);
    const exposition = await svc.deps.metrics.getSingleMetricAsString('ocpp_handshake_refused_total');
    expect(exposition).not.toContain('NOT-REGISTERED-D219');
    expect(exposition).not.toContain('127.0.0.1');
    expect(exposition).toMatch(/reason="capacity"} 0/); // every reason is a series from the start
  });

  it('when the interval ends (here: the service stops) one line per key says how many were not logged', async () => {
    const c = await anOcppCharger(svc, user);
    for (let i = 0; i < 4; i++) await rawUpgrade(svc.url, `/ocpp/${c.identity}`, { authorization: basic(c.identity, 'wrong') });
    expect(log.lines.filter((l) => l.event === 'ocpp.refuse_suppressed')).toEqual([]);
    closed = true;
    await svc.close();
    const summaries = log.lines.filter((l) => l.event === 'ocpp.refuse_suppressed');
    expect(summaries).toContainEqual(expect.objectContaining({ reason: 'wrong_password', identity: c.identity, status: 401, suppressed: 3, intervalSeconds: 60 }));
    expect(summaries).toContainEqual(expect.objectContaining({ reason: 'unknown_identity', identity: 'NOT-REGISTERED-D219', suppressed: 4 }));
    // a key refused once has nothing to add
    expect(summaries.filter((l) => l.reason === 'no_password')).toEqual([]);
  });
});

describe('D219: the refusal log stays bounded', () => {
  function setup(maxKeys: number) {
    const log = logSink();
    const registry = new Registry();
    const counter = new Counter({ name: 'refused_total', help: 'test', labelNames: ['reason'], registers: [registry] });
    const refusals = new RefusalLog(pino({ level: 'info' }, log.sink), counter, 60_000, maxKeys);
    const count = async (reason: string) => (await counter.get()).values.find((v) => v.labels.reason === reason)?.value;
    return { log, refusals, count, size: () => refusals.keys };
  }

  it('past its cap, new identities share one entry per reason; the interval ending forgets every key', async () => {
    const { log, refusals, count, size } = setup(3);
    for (let i = 0; i < 1000; i++) refusals.refused(401, 'unknown_identity', `FLOOD-${i}`, '10.0.0.1');
    expect(size()).toBe(4); // three keys and the shared one
    expect(await count('unknown_identity')).toBe(1000);
    // the first three and the first past the cap are logged; the other 996 are not
    expect(log.lines.filter((l) => l.event === 'ocpp.refuse').map((l) => l.identity)).toEqual(['FLOOD-0', 'FLOOD-1', 'FLOOD-2', 'FLOOD-3']);
    refusals.flush();
    expect(size()).toBe(0);
    expect(log.lines.filter((l) => l.event === 'ocpp.refuse_suppressed')).toEqual([
      expect.objectContaining({ reason: 'unknown_identity', otherKeys: true, suppressed: 996 }),
    ]);
    // a new interval: the key's first refusal is logged again
    refusals.refused(401, 'unknown_identity', 'FLOOD-0', '10.0.0.1');
    expect(log.lines.filter((l) => l.event === 'ocpp.refuse').map((l) => l.identity)).toHaveLength(5);
    refusals.close();
  });

  it('a reason outside the fixed set is counted as other; without an identity the address is the key', async () => {
    const { log, refusals, count } = setup(100);
    refusals.refused(400, 'something_new', undefined, '10.0.0.2');
    refusals.refused(400, 'something_new', undefined, '10.0.0.2');
    refusals.refused(400, 'something_new', undefined, '10.0.0.3');
    expect(await count('other')).toBe(3);
    expect(await count('something_new')).toBeUndefined();
    expect(log.lines.filter((l) => l.event === 'ocpp.refuse').map((l) => l.remoteAddress)).toEqual(['10.0.0.2', '10.0.0.3']);
    refusals.close();
    expect(log.lines.filter((l) => l.event === 'ocpp.refuse_suppressed')).toEqual([expect.objectContaining({ remoteAddress: '10.0.0.2', suppressed: 1 })]);
  });
});
