// D211: the customer's name goes into the invite e-mail, but it is the partner's text: a name holding a link
// ("Jan <https://evil.example/claim>") or bidi and control characters must not make the mail show a link or
// reversed text that is not the service's. Read through GET /admin/outbox (no SMTP here, so a queued invite is
// shown whole, D207).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, type TestPartner } from '../helpers/factories.ts';
import { adminHeaders, draftsOf, postCustomers, postImport } from '../helpers/partner-factories.ts';

let svc: TestService;
let partner: TestPartner;

beforeAll(async () => {
  svc = await createTestService();
  partner = await aPartner(svc.deps, { name: 'Groen \u202ELaden\u202C' });
});
afterAll(async () => svc?.close());

async function inviteTo(email: string): Promise<{ subject: string; body: string }> {
  const res = await svc.app.inject({ method: 'GET', url: `/admin/outbox?to=${encodeURIComponent(email)}`, headers: adminHeaders });
  expect(res.statusCode).toBe(200);
  const [m] = res.json().messages;
  expect(m).toBeDefined();
  return { subject: m.subject, body: m.body };
}

// U+202A–U+202E, U+2066–U+2069, the marks U+200E/U+200F/U+061C, C0/C1 controls
const HIDDEN = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C\u0000-\u0008\u000B-\u001F\u007F-\u009F]/;

describe('D211 customer names in the invite', () => {
  it('a name holding a link is left out of the greeting; the mail shows no link but the service\'s', async () => {
    const res = await postCustomers(svc, partner.apiKey, {
      consent: true,
      customers: [
        { name: 'Jan <https://evil.example/claim>', email: 'jan-link@klant.nl' },
        { name: 'Kees www.evil.example', email: 'kees-link@klant.nl' },
        { name: 'Lot evil.example', email: 'lot-link@klant.nl' },
      ],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().added).toBe(3);
    for (const email of ['jan-link@klant.nl', 'kees-link@klant.nl', 'lot-link@klant.nl']) {
      const { body } = await inviteTo(email);
      expect(body).not.toContain('evil');
      expect(body).not.toContain('<');
      expect(body.split('\n')[0]).toBe('Beste klant,');
      expect(body).toContain('Dear customer, ');
    }
    // the draft keeps the name as the partner sent it; only the mail leaves it out
    const stored = (await draftsOf(svc.deps, partner.partnerId)).find((d) => d.email === 'jan-link@klant.nl');
    expect(stored?.name).toBe('Jan <https://evil.example/claim>');
  });

  it('bidi and control characters are taken out of the name (and the partner\'s name) before it is put into the mail', async () => {
    const res = await postCustomers(svc, partner.apiKey, {
      consent: true,
      customers: [
        { name: 'Piet \u202Egnirts\u202C Jansen', email: 'piet-bidi@klant.nl' },
        { name: 'Ann\u2066a\u2069 de\u0007 Vries\u200F', email: 'ann-bidi@klant.nl' },
      ],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().added).toBe(2);

    const piet = await inviteTo('piet-bidi@klant.nl');
    expect(piet.body.split('\n')[0]).toBe('Beste Piet gnirts Jansen,');
    expect(piet.body).toContain('Dear Piet gnirts Jansen, ');
    expect(piet.subject.startsWith('Groen Laden: ')).toBe(true);
    expect(piet.body).toContain('Groen Laden heeft u aangemeld');
    const ann = await inviteTo('ann-bidi@klant.nl');
    expect(ann.body.split('\n')[0]).toBe('Beste Anna de Vries,');
    for (const m of [piet, ann]) {
      expect(m.body).not.toMatch(HIDDEN);
      expect(m.subject).not.toMatch(HIDDEN);
    }
  });

  it('an ordinary name, also with accents, a joiner or from a CSV, is greeted as sent', async () => {
    const res = await postImport(svc, partner.apiKey, {
      consent: true,
      csv: 'naam;email\nÉmile van der Zee-Bakker;emile-name@klant.nl\n"J. de Vries";devries-name@klant.nl\nمی\u200Cخواهم;joiner-name@klant.nl\n',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().added).toBe(3);
    expect((await inviteTo('emile-name@klant.nl')).body.split('\n')[0]).toBe('Beste Émile van der Zee-Bakker,');
    expect((await inviteTo('devries-name@klant.nl')).body.split('\n')[0]).toBe('Beste J. de Vries,');
    expect((await inviteTo('joiner-name@klant.nl')).body.split('\n')[0]).toBe('Beste می\u200Cخواهم,');
  });
});
