// D159: texts cut to a length never end on half a character. A partner's name or reference of 119 letters and an
// emoji was cut after the emoji's first half: the answer held a lone surrogate (strict JSON parsers refuse the whole
// answer) and the database stored U+FFFD, so the partner's own external_ref no longer matched the stored one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cutText, textFault } from '../../src/lib/nul.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner } from '../helpers/factories.ts';
import { postCustomers } from '../helpers/partner-factories.ts';

describe('cutText', () => {
  it('cuts at the length, or one before when that would split a surrogate pair', () => {
    expect(cutText('abc', 5)).toBe('abc');
    expect(cutText('abcdef', 3)).toBe('abc');
    expect(cutText('ab😀', 3)).toBe('ab'); // the emoji is two units: neither half is kept
    expect(cutText('ab😀', 4)).toBe('ab😀');
    expect(cutText('a😀b', 3)).toBe('a😀');
  });
});

describe('the partner upload cuts names and references whole characters (D159)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService();
  });
  afterAll(async () => svc?.close());

  it('answers and stores 119 letters where 120 units would end inside an emoji', async () => {
    const partner = await aPartner(svc.deps);
    const long = 'a'.repeat(119) + '😀';
    const res = await postCustomers(svc, partner.apiKey, { consent: true, send_invite: false, customers: [{ name: long, email: 'surr@klant.nl', external_ref: long }] });
    expect(res.statusCode).toBe(200);
    // no lone surrogate anywhere in the answer's text (a strict parser would refuse it)
    expect(textFault(res.body.replace(/\\u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))))).toBeNull();
    const created = res.json().created[0];
    expect(created.external_ref).toBe('a'.repeat(119));
    const stored = await svc.deps.db.selectFrom('partner_drafts').select(['name', 'external_ref']).where('email_lower', '=', 'surr@klant.nl').executeTakeFirstOrThrow();
    expect(stored).toEqual({ name: 'a'.repeat(119), external_ref: 'a'.repeat(119) });
  });
});
