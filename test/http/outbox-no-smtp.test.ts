// D207: without SMTP_URL the outbox is the way a queued e-mail reaches its customer (C3.5: it "stays visible through
// GET /admin/outbox"): a queued invite is shown whole there, and its claim link works. D172's redaction holds for
// everything else (test/domain/mail-audit.test.ts, with an SMTP server).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner } from '../helpers/factories.ts';
import { adminHeaders, postCustomers } from '../helpers/partner-factories.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService();
});
afterAll(() => svc.close());

describe('GET /admin/outbox without SMTP', () => {
  it('shows a queued invite whole, so that its claim link can be handed on', async () => {
    expect(svc.config.SMTP_URL ?? null).toBeNull();
    const partner = await aPartner(svc.deps);
    const res = await postCustomers(svc, partner.apiKey, { consent: true, send_invite: true, customers: [{ name: 'Anna', email: 'anna-outbox@klant.nl' }] });
    expect(res.statusCode).toBe(200);
    const list = await svc.app.inject({ method: 'GET', url: '/admin/outbox?to=anna-outbox@klant.nl', headers: adminHeaders });
    const [m] = list.json().messages;
    expect(m.status).toBe('queued');
    const link = /\/claim\/([^\s?#/<>"]+)/.exec(m.body);
    expect(link?.[1]).toBeDefined();
    expect(link![1]).not.toBe('…');
    const page = await svc.app.inject({ method: 'GET', url: `/claim/${link![1]}` });
    expect(page.statusCode).toBe(200);
  });
});
