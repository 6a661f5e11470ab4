// OCMF parse and verify (C5.5): records the test signs itself on every curve OCMF uses, the envelopes chargers send
// them in, a changed byte, a missing key, and two real records from the OCMF verification software's test data.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodePublicKey, normalizePublicKey, parseOcmf, parseOcmfTime, unwrapSignedData, verifySignedData } from '../../src/domain/ocmf/index.ts';
import { aMeter, ocmfPayload, type OcmfCurve, signedMeterValue, signedReading, signOcmf } from '../helpers/ocmf-signer.ts';

const AT = new Date('2026-01-05T10:00:00Z');
const reading = { wh: 2_935_600n, at: AT };

/** flips one character of the payload section (inside the gateway identifier, so the reading still matches) */
const tamper = (ocmf: string) => ocmf.replace('"GI":"TEST GATEWAY"', '"GI":"TEST GATEWAX"');

describe('parseOcmf', () => {
  it('keeps the payload text byte for byte and reads the readings', () => {
    const payload = ocmfPayload([{ at: AT, wh: 2_935_600, tx: 'B' }]).replace('{', '{ ');
    const r = parseOcmf(`OCMF|${payload}|{"SD":"3045"}`);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.record.payloadText).toBe(payload);
    expect(r.record.readings[0]).toMatchObject({ tx: 'B', value: 2935.6, unit: 'kWh', timeStatus: 'S', at: AT });
    expect(r.record.signature).toEqual({ SA: null, SE: null, SM: null, SD: '3045' });
  });

  it('reads OCMF times with comma, offset and time status', () => {
    expect(parseOcmfTime('2018-07-24T13:22:04,000+0200 S')).toEqual({ at: new Date('2018-07-24T11:22:04Z'), timeStatus: 'S' });
    expect(parseOcmfTime('2019-08-13T10:03:36,500+0000 R')).toEqual({ at: new Date('2019-08-13T10:03:36.500Z'), timeStatus: 'R' });
    expect(parseOcmfTime('2019-08-13T10:03:36Z').at).toEqual(new Date('2019-08-13T10:03:36Z'));
    expect(parseOcmfTime('yesterday').at).toBeNull();
  });

  it('refuses what is not a whole record', () => {
    for (const bad of ['OCMF|sig5', 'OCMF|x|y', 'OCMF|{"RD":[]}|{"SA":"x"}', 'OCMF|{"FV":"1.0","RD":[{"TM":"end","RV":2.5,"RU":"kWh"}]}|{"SA":"x"}', 'OCMF|[1]|{"SD":"30"}']) {
      expect(parseOcmf(bad).ok, bad).toBe(false);
    }
  });

  it('opens the 1.6 JSON form and base64 signedMeterData; other formats are told apart', () => {
    const ocmf = 'OCMF|{"RD":[]}|{"SD":"30"}';
    expect(unwrapSignedData(ocmf)).toMatchObject({ kind: 'ocmf', ocmf, publicKey: null });
    expect(unwrapSignedData(Buffer.from(ocmf).toString('base64'))).toMatchObject({ kind: 'ocmf', ocmf });
    expect(unwrapSignedData(JSON.stringify({ signedMeterData: ocmf, signingMethod: 'ECDSA-secp256r1-SHA256', encodingMethod: 'OCMF', publicKey: 'AB' }))).toEqual({
      kind: 'ocmf', ocmf, publicKey: 'AB', signingMethod: 'ECDSA-secp256r1-SHA256',
    });
    expect(unwrapSignedData(JSON.stringify({ signedMeterData: '0102ab', encodingMethod: 'EDL' }))).toEqual({ kind: 'other', encodingMethod: 'EDL' });
    expect(unwrapSignedData(JSON.stringify({ signedMeterData: 'abc', encodingMethod: 'OCMF' })).kind).toBe('malformed');
    expect(unwrapSignedData('{not json').kind).toBe('malformed');
  });
});

describe('verifySignedData', () => {
  const curves: OcmfCurve[] = ['secp256r1', 'secp384r1', 'brainpool256r1', 'brainpool384r1'];
  for (const curve of curves) {
    it(`${curve}: a valid record verifies; a changed byte of payload or signature is invalid; no key is unverified`, () => {
      const meter = aMeter(curve);
      const ocmf = signedReading(meter, AT, 2_935_600);
      expect(verifySignedData({ signedData: ocmf, registeredKey: meter.publicKeyHex, reading })).toEqual({ status: 'verified' });
      expect(verifySignedData({ signedData: tamper(ocmf), registeredKey: meter.publicKeyHex, reading })).toMatchObject({ status: 'invalid', reason: 'bad_signature' });
      const sd = /"SD":"([0-9A-F]+)"/.exec(ocmf)![1]!;
      const flipped = sd.slice(0, -2) + (sd.endsWith('00') ? '01' : '00');
      expect(verifySignedData({ signedData: ocmf.replace(sd, flipped), registeredKey: meter.publicKeyHex, reading }).status).toBe('invalid');
      expect(verifySignedData({ signedData: ocmf, reading })).toEqual({ status: 'unverified', reason: 'no_key' });
    });
  }

  it('takes the key the charger sends (2.0.1 signedMeterValue / 1.6 JSON form, base64 everywhere)', () => {
    const meter = aMeter('brainpool256r1');
    const smv = signedMeterValue(signedReading(meter, AT, 2_935_600), meter);
    expect(verifySignedData({ signedData: JSON.stringify(smv), reading })).toEqual({ status: 'verified' });
    const other = aMeter('brainpool256r1');
    // a registered key wins: a record signed with another key, even one sent along, is invalid
    expect(verifySignedData({ signedData: JSON.stringify(smv), registeredKey: other.publicKeyHex, reading })).toMatchObject({ status: 'invalid', reason: 'key_mismatch' });
    expect(verifySignedData({ signedData: JSON.stringify(smv), registeredKey: meter.publicKeyHex, reading })).toEqual({ status: 'verified' });
  });

  it('reads keys as PEM, base64 DER and bare points (curve from the algorithm), and base64 signatures', () => {
    const meter = aMeter('brainpool384r1');
    const ocmf = signOcmf(meter, ocmfPayload([{ at: AT, wh: 2_935_600 }]), { se: 'base64' });
    const jwkPoint = (k: crypto.KeyObject) => k.export({ format: 'der', type: 'spki' }).subarray(-97);
    const forms = [
      meter.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      meter.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
      Buffer.from(meter.publicKeyHex).toString('base64'),
      jwkPoint(meter.publicKey).toString('hex'),
    ];
    for (const key of forms) expect(verifySignedData({ signedData: ocmf, registeredKey: key, reading }), key).toEqual({ status: 'verified' });
    expect(normalizePublicKey(forms[3]!, 'brainpoolP384r1')).toEqual({ key: meter.publicKeyHex, curve: 'brainpoolP384r1' });
    expect(normalizePublicKey('not a key')).toEqual({ error: expect.stringContaining('not an EC public key') });
    expect(decodePublicKey(crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('hex'))).toBeNull();
  });

  it('a record whose reading is not the plain reading is invalid', () => {
    const meter = aMeter();
    const ocmf = signedReading(meter, AT, 2_935_600);
    const key = meter.publicKeyHex;
    expect(verifySignedData({ signedData: ocmf, registeredKey: key, reading: { wh: 2_935_601n, at: AT } })).toMatchObject({ status: 'invalid', reason: 'value_mismatch' });
    expect(verifySignedData({ signedData: ocmf, registeredKey: key, reading: { wh: 2_935_600n, at: new Date(AT.getTime() + 120_000) } })).toMatchObject({ reason: 'value_mismatch' });
    expect(verifySignedData({ signedData: ocmf, reading: { wh: 1n, at: AT } })).toMatchObject({ status: 'invalid', reason: 'value_mismatch' });
    // a record with an informative clock (time status I) is matched by value only; a coarse RV at its resolution
    const coarse = signOcmf(meter, JSON.stringify({ FV: '1.0', RD: [{ TM: '2001-01-01T00:00:00,000+0000 I', TX: 'E', RV: 2935.6, RU: 'kWh', ST: 'G' }] }));
    expect(verifySignedData({ signedData: coarse, registeredKey: key, reading: { wh: 2_935_642n, at: AT } })).toEqual({ status: 'verified' });
    expect(verifySignedData({ signedData: coarse, registeredKey: key, reading: { wh: 2_935_700n, at: AT } })).toMatchObject({ reason: 'value_mismatch' });
  });

  it('an unreadable record, an algorithm that does not fit the key, or a bad key is invalid; another format is unverified', () => {
    const meter = aMeter('secp384r1');
    expect(verifySignedData({ signedData: 'OCMF|x|y', registeredKey: meter.publicKeyHex })).toMatchObject({ status: 'invalid', reason: 'malformed' });
    const namedWrong = signOcmf(meter, ocmfPayload([{ at: AT, wh: 2_935_600 }]), { sa: 'ECDSA-secp256r1-SHA256' });
    expect(verifySignedData({ signedData: namedWrong, registeredKey: meter.publicKeyHex, reading })).toMatchObject({ status: 'invalid', reason: 'curve_mismatch' });
    const unknown = signOcmf(meter, ocmfPayload([{ at: AT, wh: 2_935_600 }]), { sa: 'RSA-4096-MD5' });
    expect(verifySignedData({ signedData: unknown, registeredKey: meter.publicKeyHex, reading })).toMatchObject({ status: 'invalid', reason: 'unsupported_algorithm' });
    // a curve name that is a property of every JavaScript object is no curve either
    const hostile = signOcmf(meter, ocmfPayload([{ at: AT, wh: 2_935_600 }]), { sa: 'ECDSA-constructor-SHA256' });
    expect(verifySignedData({ signedData: hostile, registeredKey: meter.publicKeyHex, reading })).toMatchObject({ status: 'invalid', reason: 'unsupported_algorithm' });
    const smv = { ...signedMeterValue(signedReading(meter, AT, 2_935_600), meter), publicKey: 'bm90IGEga2V5' };
    expect(verifySignedData({ signedData: JSON.stringify(smv), reading })).toMatchObject({ status: 'invalid', reason: 'bad_key' });
    expect(verifySignedData({ signedData: JSON.stringify({ signedMeterData: 'AQID', encodingMethod: 'EDL40' }) })).toMatchObject({ status: 'unverified', reason: 'unsupported_format' });
  });
});

// Two real records with their meters' public keys, from the test data of the S.A.F.E. e.V. Transparenzsoftware
// (github.com/SAFE-eV/transparenzsoftware, Apache License 2.0), as collected in the pyocmf project's examples.
const KEBA = {
  ocmf: 'OCMF|{"FV":"1.0","GI":"KEBA_KCP30","GS":"17619300","GV":"2.8.5","PG":"T32","IS":false,"IL":"NONE","IF":["RFID_NONE","OCPP_NONE","ISO15118_NONE","PLMN_NONE"],"IT":"NONE","ID":"","RD":[{"TM":"2019-08-13T10:03:15,000+0000 I","TX":"B","EF":"","ST":"G","RV":0.2596,"RI":"1-b:1.8.0","RU":"kWh"},{"TM":"2019-08-13T10:03:36,000+0000 R","TX":"E","EF":"","ST":"G","RV":0.2597,"RI":"1-b:1.8.0","RU":"kWh"}]}|{"SD":"304502200E2F107C987A300AC1695CA89EA149A8CDFA16188AF0A33EE64B67964AA943F9022100889A72B6D65364BEA8562E7F6A0253157ACFF84FE4929A93B5964D23C4265699"}',
  key: '3059301306072A8648CE3D020106082A8648CE3D030107034200043AEEB45C392357820A58FDFB0857BD77ADA31585C61C430531DFA53B440AFBFDD95AC887C658EA55260F808F55CA948DF235C2108A0D6DC7D4AB1A5E1A7955BE',
};
const ISKRA = {
  ocmf: 'OCMF|{"FV":"1.0","GI":"eSystemsMtg OcppChargePoint_v0 ESY-00101.01.2201234567","GS":"000007","GV":"PWR P0037","PG":"T241","MV":"Iskra","MM":"WM3M4C","MS":"W4155775","MF":"2.05","IS":true,"IT":"UNDEFINED","ID":"0480423a4b5880","CT":"CBIDC","CI":"KHStation","RD":[{"TM":"2023-04-14T11:51:06,000+0000 S","TX":"B","RV":80.77,"RI":"1-b:1.8.0","RU":"kWh","RT":"AC","EF":"t","ST":"G"},{"TM":"2023-04-14T11:54:43,000+0000 S","TX":"E","RV":80.97,"RI":"1-b:1.8.0","RU":"kWh","RT":"AC","EF":"t","ST":"G"}]}|{"SD":"30450220331E469735684E31F6F5903457C6DD8873CEAE1DFDBE4001FFBF94D124481DE7022100B8375F730A0B719B99B2DB89BA5B03CFDF4CE1A8829816BF7BBB75C3042C289D"}',
  key: '3059301306072A8648CE3D020106082A8648CE3D03010703420004890ADD61803B4665C9BFC3F4E40C4696DF54C8FB8E067613CC465D7EA67411C0A9517C0D1A021B0859A829B85D5F6FA567047E5CBD91CD9C01F643003FEA3646',
};

describe('public OCMF examples', () => {
  it('a KEBA KCP30 record verifies with its key, attached to its begin or end reading; a changed byte fails', () => {
    expect(verifySignedData({ signedData: KEBA.ocmf, registeredKey: KEBA.key, reading: { wh: 260n, at: new Date('2019-08-13T10:03:36Z') } })).toEqual({ status: 'verified' });
    expect(verifySignedData({ signedData: KEBA.ocmf.replace('"PG":"T32"', '"PG":"T33"'), registeredKey: KEBA.key })).toMatchObject({ status: 'invalid', reason: 'bad_signature' });
    expect(verifySignedData({ signedData: KEBA.ocmf })).toEqual({ status: 'unverified', reason: 'no_key' });
  });

  it('an Iskra record verifies sent as a 2.0.1 signedMeterValue; its synchronised times are checked', () => {
    const smv = JSON.stringify({ signedMeterData: Buffer.from(ISKRA.ocmf).toString('base64'), signingMethod: '', encodingMethod: 'OCMF', publicKey: ISKRA.key });
    expect(verifySignedData({ signedData: smv, reading: { wh: 80_970n, at: new Date('2023-04-14T11:54:43Z') } })).toEqual({ status: 'verified' });
    expect(verifySignedData({ signedData: smv, reading: { wh: 80_970n, at: new Date('2023-04-14T12:54:43Z') } })).toMatchObject({ status: 'invalid', reason: 'value_mismatch' });
    expect(verifySignedData({ signedData: smv.replace(ISKRA.key.slice(-8), '00000000') }).status).toBe('invalid');
  });
});
