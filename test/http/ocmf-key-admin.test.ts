// D177: the key an operator registers for a charger's signing meter is one a signature can be verified with: an EC key
// on a curve OCMF's signature algorithms name, and on the curve the operator names when they name one; and it reads
// back. A P-521 key was accepted (200) and every signed value of the charger was then invalid and held.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { aMeter } from '../helpers/ocmf-signer.ts';
import { anOcppCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
const admin = bearer(TEST_ADMIN_TOKEN);
beforeAll(async () => {
  svc = await createTestService();
});
afterAll(() => svc.close());

const spkiHex = (k: crypto.KeyObject) => k.export({ format: 'der', type: 'spki' }).toString('hex').toUpperCase();

describe('PUT and GET /admin/chargers/:charger_id/ocmf-public-key', () => {
  it('refuses a key no OCMF algorithm can verify and a curve that is not the key’s; reads the registered key back', async () => {
    const user = await aUser(svc.deps);
    const ch = await anOcppCharger(svc, user);
    const url = `/admin/chargers/${ch.chargerId}/ocmf-public-key`;
    const put = (payload: object) => svc.app.inject({ method: 'PUT', url, headers: admin, payload });
    const get = async () => (await svc.app.inject({ method: 'GET', url, headers: admin })).json();

    expect(await get()).toEqual({ charger_id: ch.chargerId, ocmf_public_key: null, curve: null });
    const p521 = crypto.generateKeyPairSync('ec', { namedCurve: 'secp521r1' }).publicKey;
    const refused = await put({ public_key: spkiHex(p521) });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'invalid_public_key' });
    expect(refused.json().detail).toContain('secp521r1');
    const meter = aMeter('secp256r1');
    const wrongCurve = await put({ public_key: meter.publicKeyHex, curve: 'brainpoolP256r1' });
    expect([wrongCurve.statusCode, wrongCurve.json().error]).toEqual([400, 'invalid_public_key']);
    const unknownCurve = await put({ public_key: meter.publicKeyHex, curve: 'curve25519' });
    expect([unknownCurve.statusCode, unknownCurve.json().error]).toEqual([400, 'invalid_public_key']);
    expect(await get()).toEqual({ charger_id: ch.chargerId, ocmf_public_key: null, curve: null }); // nothing changed

    // the curve named as OCMF names it, or as OpenSSL does, with the whole key or a bare point
    expect((await put({ public_key: meter.publicKeyHex, curve: 'secp256r1' })).json()).toEqual({ charger_id: ch.chargerId, ocmf_public_key: meter.publicKeyHex, curve: 'prime256v1' });
    const brainpool = aMeter('brainpool256r1');
    const point = brainpool.publicKey.export({ format: 'der', type: 'spki' }).subarray(-65).toString('hex');
    expect((await put({ public_key: point, curve: 'brainpool256r1' })).json()).toMatchObject({ ocmf_public_key: brainpool.publicKeyHex, curve: 'brainpoolP256r1' });
    expect(await get()).toEqual({ charger_id: ch.chargerId, ocmf_public_key: brainpool.publicKeyHex, curve: 'brainpoolP256r1' });
    const none = await svc.app.inject({ method: 'GET', url: '/admin/chargers/00000000-0000-4000-8000-000000000000/ocmf-public-key', headers: admin });
    expect([none.statusCode, none.json().error]).toEqual([404, 'charger_not_found']);
  });
});
