// C4.10/C4.11 at the edge: numbers bounded before arithmetic, NUL in stored strings, and transaction messages
// that cannot be used are acknowledged (never a CALLERROR) and quarantined with the raw frame as received.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RPCClient } from 'ocpp-rpc';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, hourAgoTimeline, type OcppProtocol, type TestCharger, withConnectedCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let user: { userId: string; token: string };
const { at } = hourAgoTimeline();
const SQL_OR_STACK = /select|insert|update|violat|constraint|syntax|postgres|relation|\bat \w+ \(|\.ts:\d+|invalid byte|out of range for type/i;

const logLines: Record<string, unknown>[] = [];
const logStream = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n')) if (line) logLines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

beforeAll(async () => {
  svc = await createTestService({ listen: true, logger: pino({ level: 'info' }, logStream) });
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

const withCharger = (protocol: OcppProtocol, fn: (cli: RPCClient, ch: TestCharger) => Promise<void>) => withConnectedCharger(svc, user, protocol, fn);

/** Sends a frame exactly as written and resolves with the answer frame (CALLRESULT or CALLERROR). */
function rawCall(cli: RPCClient, id: string, frame: string): Promise<unknown[]> {
  return new Promise((resolve) => {
    const onMessage = ({ message, outbound }: { message: string; outbound: boolean }) => {
      if (outbound) return;
      const f = JSON.parse(message) as unknown[];
      if (f[1] !== id) return;
      cli.off('message', onMessage);
      resolve(f);
    };
    cli.on('message', onMessage);
    cli.sendRaw(frame);
  });
}

async function quarantineOf(ch: TestCharger) {
  const res = await svc.app.inject({ method: 'GET', url: `/admin/chargers/${ch.chargerId}/quarantine`, headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` } });
  expect(res.statusCode).toBe(200);
  return res.json().messages as { id: string; kind: string; action: string; raw: string; reason: string; message_id: string }[];
}

const readingsOf = (chargerId: string) =>
  svc.deps.db.selectFrom('meter_readings').select(['wh', 'measured_at']).where('charger_id', '=', chargerId).orderBy('measured_at').execute();

describe('bounded numbers (C4.10)', () => {
  it('acknowledges and quarantines a 2.0.1 reading with multiplier 2000000, storing nothing from it', async () => {
    const ch = await withCharger('ocpp2.0.1', async (cli) => {
      const mv = { timestamp: at(1), sampledValue: [{ value: 5, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh', multiplier: 2000000 } }] };
      expect(await cli.call('MeterValues', { evseId: 1, meterValue: [mv] })).toEqual({});
      const frac = { ...mv, sampledValue: [{ ...mv.sampledValue[0], unitOfMeasure: { unit: 'Wh', multiplier: 1.5 } }] };
      expect(await cli.call('MeterValues', { evseId: 1, meterValue: [frac] })).toEqual({});
    });
    const q = await quarantineOf(ch);
    expect(q.map((m) => [m.kind, m.action])).toEqual([['message', 'MeterValues'], ['message', 'MeterValues']]);
    expect(q[1]!.reason).toMatch(/multiplier/);
    // item 9: one structured line per quarantined message, small whatever the frame held
    const lines = logLines.filter((l) => l.event === 'ocpp.quarantine' && l.chargerId === ch.chargerId);
    expect(lines.map((l) => l.quarantineId).sort()).toEqual(q.map((m) => m.id).sort());
    expect(lines[0]).toMatchObject({ identity: ch.identity, action: 'MeterValues', messageId: expect.any(String), reason: expect.stringMatching(/multiplier/) });
    expect(lines.every((l) => JSON.stringify(l).length < 4096)).toBe(true);
    expect(q[1]!.raw).toContain('"multiplier":2000000');
    expect(await readingsOf(ch.chargerId)).toEqual([]);
  });

  it('quarantines meterStart 1e21 and a value "1e21" (acknowledged, raw frame kept as sent), stores the rest', async () => {
    let txId = 0;
    const ch = await withCharger('ocpp1.6', async (cli) => {
      const start = `[2,"s1","StartTransaction",{"connectorId":1,"idTag":"TAG","meterStart":1e21,"timestamp":"${at(0)}"}]`;
      const ans = await rawCall(cli, 's1', start);
      expect(ans[0]).toBe(3); // CALLRESULT, never CALLERROR
      txId = (ans[2] as { transactionId: number }).transactionId;
      expect(Number.isInteger(txId)).toBe(true);
      const ok = (await cli.call('StartTransaction', { connectorId: 2, idTag: 'TAG', meterStart: 100, timestamp: at(0) })) as { transactionId: number };
      const mv = { connectorId: 2, transactionId: ok.transactionId, meterValue: [{ timestamp: at(1), sampledValue: [{ value: '1e21' }] }] };
      expect(await cli.call('MeterValues', mv)).toEqual({});
      for (const v of ['1e999999', '12345678901234567', '2000000000000']) {
        expect(await cli.call('MeterValues', { ...mv, meterValue: [{ timestamp: at(2), sampledValue: [{ value: v }] }] })).toEqual({});
      }
      expect(await cli.call('MeterValues', { ...mv, meterValue: [{ timestamp: at(3), sampledValue: [{ value: '1.5e3' }] }] })).toEqual({});
    });
    const q = await quarantineOf(ch);
    expect(q.map((m) => m.action)).toEqual(['MeterValues', 'MeterValues', 'MeterValues', 'MeterValues', 'StartTransaction']);
    const start = q[4]!;
    expect(start.raw).toContain('"meterStart":1e21');
    expect(start.reason).toMatch(/meterStart/);
    expect(start.message_id).toBe('s1');
    // nothing of the quarantined start was stored; the good start and the 1.5e3 reading were
    const sessions = await svc.deps.db.selectFrom('charging_sessions').select(['transaction_id', 'meter_start_wh']).where('charger_id', '=', ch.chargerId).execute();
    expect(sessions.map((s) => s.meter_start_wh)).toEqual(['100']);
    expect(sessions.some((s) => s.transaction_id === String(txId))).toBe(false);
    expect((await readingsOf(ch.chargerId)).map((r) => r.wh)).toEqual(['100', '1500']);
  });
});

describe('NUL in stored strings (C4.10, C4.11)', () => {
  it('acknowledges and quarantines an idTag with \\u0000 in both versions, raw frame with the escape', async () => {
    const nul = 'TA\u0000G';
    const ch16 = await withCharger('ocpp1.6', async (cli) => {
      const ans = (await cli.call('StartTransaction', { connectorId: 1, idTag: nul, meterStart: 0, timestamp: at(0) })) as { transactionId: number; idTagInfo: { status: string } };
      expect(ans.idTagInfo.status).toBe('Invalid');
      expect(await cli.call('StopTransaction', { transactionId: ans.transactionId, idTag: nul, meterStop: 10, timestamp: at(5) })).toEqual({});
    });
    const ch201 = await withCharger('ocpp2.0.1', async (cli) => {
      const ev = { eventType: 'Started', timestamp: at(0), triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: 'T-1' }, evse: { id: 1 }, idToken: { idToken: nul, type: 'ISO14443' } };
      // D255: the token cannot be read, so it is answered Invalid (2.0.1 answers idTokenInfo to a request with an idToken)
      expect(await cli.call('TransactionEvent', ev)).toEqual({ idTokenInfo: { status: 'Invalid' } });
    });
    for (const [ch, actions] of [[ch16, ['StopTransaction', 'StartTransaction']], [ch201, ['TransactionEvent']]] as const) {
      const q = await quarantineOf(ch);
      expect(q.map((m) => m.action)).toEqual(actions);
      for (const m of q) {
        expect(m.raw).toContain('TA\\u0000G');
        expect(m.reason).toMatch(/NUL/);
      }
    }
    const rows = await svc.deps.db.selectFrom('ocpp_quarantine').select(['raw', 'payload']).where('charger_id', '=', ch16.chargerId).execute();
    expect(rows.every((r) => r.payload === null)).toBe(true);
  });

  it('answers a non-transaction message it cannot read with a CALLERROR that carries no SQL or stack text', async () => {
    await withCharger('ocpp1.6', async (cli) => {
      const err = await cli.call('Authorize', { idTag: 'A\u0000B' }).catch((e: unknown) => e);
      expect(err).toMatchObject({ rpcErrorCode: 'FormationViolation' });
      expect((err as Error).message).not.toMatch(SQL_OR_STACK);
      // connectorId beyond int32 would be a database error: read as unusable, acknowledged, quarantined
      expect(await cli.call('MeterValues', { connectorId: 3_000_000_000, meterValue: [{ timestamp: at(1), sampledValue: [{ value: '5' }] }] })).toEqual({});
    });
  });
});

describe('hostile shapes found by the fuzz test', () => {
  it('an action named like an Object.prototype member is not handled: NotSupported / NotImplemented, nothing logged as a failure', async () => {
    for (const protocol of ['ocpp1.6', 'ocpp2.0.1'] as const) {
      await withCharger(protocol, async (cli) => {
        for (const [i, action] of ['constructor', '__proto__', 'hasOwnProperty', 'toString', 'valueOf'].entries()) {
          const ans = await rawCall(cli, `p${i}`, JSON.stringify([2, `p${i}`, action, {}]));
          expect(ans.slice(0, 3)).toEqual([4, `p${i}`, protocol === 'ocpp1.6' ? 'NotSupported' : 'NotImplemented']);
        }
        expect(await cli.call('Heartbeat', {})).toHaveProperty('currentTime');
      });
    }
    expect(logLines.filter((l) => l.msg === 'ocpp: message handling failed')).toEqual([]);
  });

  it('a 2.0.1 signedMeterValue nested 10,000 deep is set aside, the message acknowledged (no stack overflow)', async () => {
    const deep = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    const frame = `[2,"deep-s","MeterValues",{"evseId":1,"meterValue":[{"timestamp":"${at(1)}","sampledValue":[{"value":1000,"signedMeterValue":${deep}}]}]}]`;
    const before = logLines.filter((l) => l.msg === 'ocpp: message handling failed').length;
    await withCharger('ocpp2.0.1', async (cli) => {
      expect(await rawCall(cli, 'deep-s', frame)).toEqual([3, 'deep-s', {}]);
    });
    expect(logLines.filter((l) => l.msg === 'ocpp: message handling failed')).toHaveLength(before);
  });

  it('a transaction message nested 10,000 deep is acknowledged and quarantined with its raw text (no stack overflow)', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const frame = `[2,"deep-1","MeterValues",{"connectorId":1,"meterValue":${deep}}]`;
    const ch = await withCharger('ocpp1.6', async (cli) => {
      expect(await rawCall(cli, 'deep-1', frame)).toEqual([3, 'deep-1', {}]);
    });
    const q = await quarantineOf(ch);
    expect(q).toHaveLength(1);
    expect(q[0]!.raw).toBe(frame);
    const row = await svc.deps.db.selectFrom('ocpp_quarantine').select('payload').where('id', '=', q[0]!.id).executeTakeFirstOrThrow();
    expect(row.payload).toBeNull();
  });
});
