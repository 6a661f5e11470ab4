// D195: answers that carry a secret shown once are never cached: Cache-Control: no-store and Pragma: no-cache, as
// POST /oauth/token sends: every /admin answer (partner API keys, CPO client secrets, personal tokens, charger
// passwords), /partner answers (claim links), POST /chargers (the OCPP password), POST /v1/mandate-links.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService();
});
afterAll(async () => {
  await svc.close();
});

const admin = (method: 'GET' | 'POST', url: string, payload?: object) =>
  svc.app.inject({ method, url, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, ...(payload ? { payload } : {}) });
const noStore = (res: { headers: Record<string, unknown> }) => [res.headers['cache-control'], res.headers['pragma']];

describe('D195: secrets shown once are not cached', () => {
  it('the admin answers that return a partner key, a CPO client secret, a personal token and a charger password', async () => {
    const partner = await admin('POST', '/admin/partners', { name: 'Laadpaal BV' });
    const { partner_id } = partner.json() as { partner_id: string };
    const key = await admin('POST', `/admin/partners/${partner_id}/api-keys`, {});
    const client = await admin('POST', `/admin/partners/${partner_id}/cpo-clients`, {});
    const user = await admin('POST', '/admin/users', { email: 'eigenaar@example.nl', full_name: 'Eigenaar' });
    const { user_id } = user.json() as { user_id: string };
    const token = await admin('POST', `/admin/users/${user_id}/api-tokens`, { scopes: ['chargers:read', 'chargers:write'] });
    for (const res of [partner, key, client, user, token]) {
      expect(res.statusCode, res.body).toBeLessThan(300);
      expect(noStore(res), res.body).toEqual(['no-store', 'no-cache']);
    }
    expect(noStore(await admin('GET', '/admin/jobs'))).toEqual(['no-store', 'no-cache']);
    // the owner's POST /chargers answers the charger's OCPP password once
    const personal = (token.json() as { token: string }).token;
    const charger = await svc.app.inject({
      method: 'POST',
      url: '/chargers',
      headers: { authorization: `Bearer ${personal}` },
      payload: { nickname: 'Garage', connection_type: 'ocpp' },
    });
    expect(charger.statusCode, charger.body).toBe(201);
    expect((charger.json() as { ocpp: { password: string } }).ocpp.password).toBeTruthy();
    expect(noStore(charger)).toEqual(['no-store', 'no-cache']);
    // answers without a secret keep their caching
    const css = await svc.app.inject({ method: 'GET', url: '/healthz' });
    expect(css.headers['pragma']).toBeUndefined();
  });
});
