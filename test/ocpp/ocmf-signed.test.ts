// C5.5: signed meter values (OCMF) are verified as they are stored, on the set-based ingest path and the one-message
// path alike: 2.0.1 TransactionEvent signedMeterValue (valid, tampered, without a key), 1.6 SignedData as the OCMF
// string and as the JSON object real chargers send, beside a plain value or alone; a key registered for the charger
// (admin API and CLI) wins over the one sent. GET /sessions shows `signed: {readings, verified, invalid}`.
import type { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli } from '../../src/cli/admin.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { aMeter, ocmfPayload, signedMeterValue, signedReading, signOcmf, type TestMeter } from '../helpers/ocmf-signer.ts';
import { anOcppCharger, connectCharger, hourAgoTimeline, type OcppProtocol, type TestCharger } from '../helpers/ocpp-factories.ts';

const { T0, at } = hourAgoTimeline();
const ms = (min: number) => T0 + min * 60_000;

/** one byte of the payload changed after signing (the gateway identifier: the reading itself still matches) */
const tamper = (ocmf: string) => ocmf.replace('"GI":"TEST GATEWAY"', '"GI":"TEST GATEWAX"');

/** a 2.0.1 meter value of the energy register (Wh) with an optional signedMeterValue */
const mv201 = (min: number, wh: number, signed?: object) => ({
  timestamp: at(min),
  sampledValue: [{ value: wh, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' }, ...(signed ? { signedMeterValue: signed } : {}) }],
});

/** a 1.6 meter value: the plain register and, beside it, SignedData */
const mv16 = (min: number, wh: number, signedData?: string) => ({
  timestamp: at(min),
  sampledValue: [
    { value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh' },
    ...(signedData ? [{ value: signedData, format: 'SignedData', measurand: 'Energy.Active.Import.Register', unit: 'Wh' }] : []),
  ],
});

describe.each([
  ['set-based (group commit)', {}],
  ['one message at a time', { INGEST_BATCH_MAX: '0' }],
])('signed meter values, %s', (_name, env) => {
  let svc: TestService;
  let user: { userId: string; token: string };

  beforeAll(async () => {
    svc = await createTestService({ listen: true, env });
    user = await aUser(svc.deps);
  });
  afterAll(() => svc.close());

  const statuses = async (ch: TestCharger) =>
    (await svc.deps.db.selectFrom('meter_readings').select(['wh', 'signature_status']).where('charger_id', '=', ch.chargerId).orderBy('measured_at').execute()).map(
      (r) => [Number(r.wh), r.signature_status],
    );
  const signedOf = async (ch: TestCharger) => {
    const res = await svc.app.inject({ method: 'GET', url: `/sessions?charger_id=${ch.chargerId}`, headers: bearer(user.token) });
    expect(res.statusCode).toBe(200);
    return res.json().sessions.map((s: { signed: unknown }) => s.signed);
  };
  const registerKey = (ch: TestCharger, key: string | null) =>
    svc.app.inject({ method: 'PUT', url: `/admin/chargers/${ch.chargerId}/ocmf-public-key`, headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` }, payload: { public_key: key } });

  async function withCharger(protocol: OcppProtocol, before: (ch: TestCharger) => Promise<void>, fn: (cli: RPCClient) => Promise<void>): Promise<TestCharger> {
    const ch = await anOcppCharger(svc, user);
    await before(ch);
    const cli = await connectCharger(svc, ch, protocol);
    try {
      await fn(cli);
    } finally {
      await cli.close();
    }
    return ch;
  }

  it('2.0.1 TransactionEvent: a valid signedMeterValue verifies with the key it carries, a tampered one is invalid, one without a key is unverified', async () => {
    const meter = aMeter('secp256r1');
    const base = { transactionInfo: { transactionId: `T-${Math.random()}` }, evse: { id: 1, connectorId: 1 } };
    const ch = await withCharger('ocpp2.0.1', async () => {}, async (cli) => {
      const ev = (eventType: string, min: number, seqNo: number, wh: number, signed?: object) =>
        cli.call('TransactionEvent', { ...base, eventType, timestamp: at(min), triggerReason: 'MeterValuePeriodic', seqNo, meterValue: [mv201(min, wh, signed)] });
      await ev('Started', 0, 0, 10_000, signedMeterValue(signedReading(meter, ms(0), 10_000, 'B'), meter));
      await ev('Updated', 1, 1, 10_100, signedMeterValue(tamper(signedReading(meter, ms(1), 10_100)), meter));
      await ev('Updated', 2, 2, 10_200, signedMeterValue(signedReading(meter, ms(2), 10_200), null));
      await ev('Updated', 3, 3, 10_300);
      await ev('Ended', 4, 4, 10_400, signedMeterValue(signedReading(meter, ms(4), 10_400, 'E'), meter));
    });
    expect(await statuses(ch)).toEqual([
      [10_000, 'verified'],
      [10_100, 'invalid'],
      [10_200, 'unverified'],
      [10_300, null],
      [10_400, 'verified'],
    ]);
    expect(await signedOf(ch)).toEqual([{ readings: 4, verified: 2, invalid: 1 }]);
  });

  it('2.0.1: a key registered for the charger verifies values sent without one; a value signed with another key is invalid', async () => {
    const meter = aMeter('brainpool256r1');
    const other = aMeter('brainpool256r1');
    const base = { transactionInfo: { transactionId: `T-${Math.random()}` }, evse: { id: 1, connectorId: 1 } };
    const ch = await withCharger('ocpp2.0.1', async (c) => void expect((await registerKey(c, meter.publicKeyHex)).statusCode).toBe(200), async (cli) => {
      const ev = (eventType: string, min: number, seqNo: number, wh: number, signed?: object) =>
        cli.call('TransactionEvent', { ...base, eventType, timestamp: at(min), triggerReason: 'MeterValuePeriodic', seqNo, meterValue: [mv201(min, wh, signed)] });
      await ev('Started', 10, 0, 20_000, signedMeterValue(signedReading(meter, ms(10), 20_000, 'B'), null));
      await ev('Updated', 11, 1, 20_100, signedMeterValue(signedReading(other, ms(11), 20_100), other));
      await ev('Updated', 12, 2, 20_200, signedMeterValue(signedReading(meter, ms(12), 20_200), meter));
    });
    expect(await statuses(ch)).toEqual([
      [20_000, 'verified'],
      [20_100, 'invalid'],
      [20_200, 'verified'],
    ]);
    expect(await signedOf(ch)).toEqual([{ readings: 3, verified: 2, invalid: 1 }]);
  });

  it('1.6 SignedData as the OCMF string and as the JSON object, beside the plain value and alone in StopTransaction, with a key registered through the CLI', async () => {
    const meter = aMeter('secp384r1');
    const cliRun = async (args: string[]) => {
      let out = '';
      const code = await runAdminCli(args, { ADMIN_TOKEN: svc.config.ADMIN_TOKEN, ADMIN_URL: svc.url }, { out: (t) => (out += t), err: (t) => (out += t) });
      return { code, out };
    };
    const ch = await withCharger(
      'ocpp1.6',
      async (c) => {
        const r = await cliRun(['set-ocmf-key', c.chargerId, '--key', meter.publicKey.export({ format: 'der', type: 'spki' }).toString('base64')]);
        expect(r.code).toBe(0);
        expect(JSON.parse(r.out)).toEqual({ charger_id: c.chargerId, ocmf_public_key: meter.publicKeyHex, curve: 'secp384r1' });
      },
      async (cli) => {
        const start = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 30_000, timestamp: at(20) })) as { transactionId: number };
        const transactionId = start.transactionId;
        await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [mv16(21, 30_100, signedReading(meter, ms(21), 30_100))] });
        const asObject = JSON.stringify(signedMeterValue(signedReading(meter, ms(22), 30_200), meter));
        await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [mv16(22, 30_200, asObject)] });
        // properly signed, but for 30.250 kWh while the plain reading says 30,300 Wh
        await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [mv16(23, 30_300, signOcmf(meter, ocmfPayload([{ at: ms(23), wh: 30_250 }])))] });
        await cli.call('StopTransaction', {
          transactionId, meterStop: 30_400, timestamp: at(24),
          transactionData: [{ timestamp: at(24), sampledValue: [{ value: signedReading(meter, ms(24), 30_400, 'E'), format: 'SignedData', context: 'Transaction.End' }] }],
        });
      },
    );
    expect(await statuses(ch)).toEqual([
      [30_000, null],
      [30_100, 'verified'],
      [30_200, 'verified'],
      [30_300, 'invalid'],
      [30_400, 'verified'],
    ]);
    expect(await signedOf(ch)).toEqual([{ readings: 4, verified: 3, invalid: 1 }]);
  });

  it('1.6 without a registered key: the OCMF string stays unverified, the JSON object with its key verifies', async () => {
    const meter: TestMeter = aMeter('brainpool384r1');
    const ch = await withCharger('ocpp1.6', async () => {}, async (cli) => {
      const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 40_000, timestamp: at(30) })) as { transactionId: number };
      await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [mv16(31, 40_100, signedReading(meter, ms(31), 40_100))] });
      await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [mv16(32, 40_200, JSON.stringify(signedMeterValue(signedReading(meter, ms(32), 40_200), meter)))] });
    });
    expect(await statuses(ch)).toEqual([
      [40_000, null],
      [40_100, 'unverified'],
      [40_200, 'verified'],
    ]);
    expect(await signedOf(ch)).toEqual([{ readings: 2, verified: 1, invalid: 0 }]);
  });

  it("a signed value sent alone signs its own charger's reading only: another charger's reading at the same instant, and another reading carrying the same record, stay as they were", async () => {
    const meter = aMeter('secp256r1');
    const record = signedReading(meter, ms(41), 50_100);
    const sessionOf = async (cli: RPCClient, meterStart: number) =>
      ((await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart, timestamp: at(40) })) as { transactionId: number }).transactionId;
    // A: a reading at 41 carrying the record (verified with A's key), a plain one at 42
    const a = await withCharger('ocpp1.6', async (c) => void expect((await registerKey(c, meter.publicKeyHex)).statusCode).toBe(200), async (cli) => {
      const transactionId = await sessionOf(cli, 50_000);
      await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [mv16(41, 50_100, record)] });
      await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [mv16(42, 50_200)] });
    });
    expect(await statuses(a)).toEqual([[50_000, null], [50_100, 'verified'], [50_200, null]]);
    // B: a plain reading at 42, then the same record alone at 42 (a meter that sends its signed value apart)
    const b = await withCharger('ocpp1.6', async () => {}, async (cli) => {
      const transactionId = await sessionOf(cli, 60_000);
      await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [mv16(42, 60_200)] });
      await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [{ timestamp: at(42), sampledValue: [{ value: record, format: 'SignedData', measurand: 'Energy.Active.Import.Register', unit: 'Wh' }] }] });
    });
    const signedData = async (ch: TestCharger) =>
      (await svc.deps.db.selectFrom('meter_readings').select(['wh', 'signed_data']).where('charger_id', '=', ch.chargerId).orderBy('measured_at').execute()).map((r) => [Number(r.wh), r.signed_data]);
    // B's reading at 42 carries it; the record says 50.100 kWh, B's register 60,200 Wh: not a signature of that reading
    expect(await signedData(b)).toEqual([[60_000, null], [60_200, record]]);
    expect(await statuses(b)).toEqual([[60_000, null], [60_200, 'invalid']]);
    // A is untouched: its reading at 42 stays unsigned, its reading at 41 stays verified
    expect(await signedData(a)).toEqual([[50_000, null], [50_100, record], [50_200, null]]);
    expect(await statuses(a)).toEqual([[50_000, null], [50_100, 'verified'], [50_200, null]]);
  });

  it('the admin API refuses what is not an EC public key and removes a key with null', async () => {
    const ch = await anOcppCharger(svc, user);
    const bad = await registerKey(ch, 'not a key');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('invalid_public_key');
    const meter = aMeter('secp256r1');
    const point = meter.publicKey.export({ format: 'der', type: 'spki' }).subarray(-65).toString('hex');
    expect((await registerKey(ch, point)).json()).toEqual({ charger_id: ch.chargerId, ocmf_public_key: meter.publicKeyHex, curve: 'prime256v1' });
    expect((await registerKey(ch, null)).json()).toEqual({ charger_id: ch.chargerId, ocmf_public_key: null, curve: null });
    const stored = await svc.deps.db.selectFrom('chargers').select('ocmf_public_key').where('id', '=', ch.chargerId).executeTakeFirstOrThrow();
    expect(stored.ocmf_public_key).toBeNull();
  });
});
