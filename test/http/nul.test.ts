// A NUL character (U+0000) in a request's body, query or path: PostgreSQL's text cannot hold it, and the statement
// failed as a 500 (fuzz seed 129249097: POST /admin/partners with a name holding "\u0000"). It is refused as a bad
// value of its field, 400 in the documented shape, and nothing is written.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textFaultPath } from '../../src/lib/nul.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, aUser, bearer } from '../helpers/factories.ts';

describe('a NUL character in a request', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService();
  });
  afterAll(() => svc?.close());

  const count = async (table: 'partners' | 'chargers') =>
    (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(svc.deps.db)).rows[0]!.n;

  it('in a body field: 400 naming the field, nothing written (the fuzz case as sent)', async () => {
    const before = await count('partners');
    const res = await svc.app.inject({
      method: 'POST',
      url: '/admin/partners?%zz=1',
      headers: { ...bearer(svc.config.ADMIN_TOKEN!), 'content-type': 'application/json; charset=latin1' },
      payload: '{"name":"\\u0000\\ud800\\udc00\\uffff","extra":1}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', detail: 'body.name: must not contain a NUL character (U+0000)' });
    expect(await count('partners')).toBe(before);
    // the same name without the NUL is taken
    const ok = await svc.app.inject({ method: 'POST', url: '/admin/partners', headers: bearer(svc.config.ADMIN_TOKEN!), payload: { name: 'Fuzz \ud800\udc00 partner' } });
    expect(ok.statusCode).toBe(201);
  });

  it('text that is not UTF-8 (Latin-1 bytes, an unpaired surrogate): 400 naming the field, nothing written (D112)', async () => {
    const before = await count('partners');
    const post = (payload: string | Buffer) =>
      svc.app.inject({ method: 'POST', url: '/admin/partners', headers: { ...bearer(svc.config.ADMIN_TOKEN!), 'content-type': 'application/json; charset=iso-8859-1' }, payload });
    // "Müller" and "Möller" in Latin-1: both arrived as "M\uFFFDller", one name for two (an idempotency key for two customers)
    for (const name of [Buffer.from('{"name":"klant-M\u00fcller"}', 'latin1'), Buffer.from('{"name":"klant-M\u00f6ller"}', 'latin1'), '{"name":"sur\\ud800x"}', '{"name":"sur\\udbffx"}']) {
      const res = await post(name);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_request', detail: expect.stringMatching(/^body\.name: must be UTF-8 text/) });
    }
    expect(await count('partners')).toBe(before);
    // the same name in UTF-8 is taken
    expect((await post(Buffer.from('{"name":"klant-M\u00fcller"}', 'utf8'))).statusCode).toBe(201);
  });

  it('in an owner’s request: 400, no charger registered', async () => {
    const owner = await aUser(svc.deps);
    const before = await count('chargers');
    const res = await svc.app.inject({ method: 'POST', url: '/chargers', headers: bearer(owner.token), payload: { nickname: 'Garage\u0000', connection_type: 'ocpp' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: expect.any(String), detail: expect.stringContaining('NUL') });
    expect(await count('chargers')).toBe(before);
  });

  it('in a query parameter: 400 naming the parameter', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/admin/outbox?to=owner%00%40example.nl', headers: bearer(svc.config.ADMIN_TOKEN!) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', detail: 'querystring.to: must not contain a NUL character (U+0000)' });
  });

  it('a body nested as deep as its size allows is walked without overflowing the stack (a page that keeps unknown fields)', async () => {
    const deep = (n: number, leaf: string) => '{"a":'.repeat(n) + leaf + '}'.repeat(n);
    const post = (payload: string) =>
      svc.app.inject({ method: 'POST', url: '/claim/00000000-0000-4000-8000-000000000000', headers: { 'content-type': 'application/json' }, payload });
    const plain = await post(deep(100_000, '1'));
    expect(plain.statusCode).toBeLessThan(500);
    const nul = await post(deep(100_000, '"x\\u0000"'));
    expect(nul.statusCode).toBe(400);
    expect(nul.json()).toEqual({ error: 'invalid_request', detail: `body${'.a'.repeat(32)}.…: must not contain a NUL character (U+0000)` });
  });

  it('in a partner’s customer rows (checked by the upload itself): that row rejected as invalid, the others added', async () => {
    const partner = await aPartner(svc.deps);
    const send = (url: string, payload: object) => svc.app.inject({ method: 'POST', url, headers: bearer(partner.apiKey), payload });
    const cases = [
      send('/partner/customers', { consent: true, send_invite: false, customers: [{ name: 'Nul\u0000Name', email: 'nul1@ere-owner.nl' }, { name: 'Good One', email: 'good1@ere-owner.nl' }] }),
      send('/partner/drafts/import', { consent: true, send_invite: false, rows: [{ name: 'Nul Row', email: 'nul2@ere-owner.nl', city: 'Ut\u0000recht' }, { name: 'Good Two', email: 'good2@ere-owner.nl' }] }),
      send('/partner/drafts/import', { consent: true, send_invite: false, csv: 'name,email\nNul\u0000Csv,nul3@ere-owner.nl\nGood Three,good3@ere-owner.nl\n' }),
    ];
    for (const [i, res] of (await Promise.all(cases)).entries()) {
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().rejected).toEqual([{ email: `nul${i + 1}@ere-owner.nl`, reason: 'invalid', row: 1 }]);
      expect(res.json().created.map((c: { email: string }) => c.email)).toEqual([['good1', 'good2', 'good3'][i] + '@ere-owner.nl']);
    }
  });

  it('textFaultPath finds it in nested values and in keys', () => {
    expect(textFaultPath({ a: [1, 'x', { b: 'y\u0000' }] })).toEqual(['a', 2, 'b']);
    expect(textFaultPath({ ok: 'yes', ['k\u0000']: 1 })).toEqual(['k\u0000']);
    expect(textFaultPath({ a: ['x', new Date(0), null, 3] })).toBeNull();
    // a list the domain judges item by item is not looked into; the rest of the body is
    expect(textFaultPath({ items: [{ ref: 'a\u0000' }], b: 'x' }, [['items']])).toBeNull();
    expect(textFaultPath({ items: [{ ref: 'a\u0000' }], b: 'x\u0000' }, [['items']])).toEqual(['b']);
  });
});
