// D174, D175 (an outside audit of e-mail and CSV): SMTP_FROM without an address stops the start naming the key, and a
// CSV header must name both name and email, as the error text and docs/partner.md say.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner } from '../helpers/factories.ts';
import { postImport } from '../helpers/partner-factories.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService();
});
afterAll(async () => {
  await svc?.close();
});

describe('D174, D175: SMTP_FROM and the CSV header', () => {
  it('SMTP_FROM without an address stops the start naming the key', () => {
    for (const bad of ['ERE Gateway', 'ERE Gateway <>', 'noreply']) {
      let err: unknown;
      try {
        loadConfig({ SMTP_FROM: bad });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).issues.map((i) => i.key)).toEqual(['SMTP_FROM']);
    }
    for (const good of ['ERE Gateway <no-reply@ere.nl>', 'no-reply@ere.nl', '"ERE, B.V." <no-reply@ere.nl>']) expect(loadConfig({ SMTP_FROM: good }).SMTP_FROM).toBe(good);
  });

  it('a CSV header naming only one of name and email is 400, saying which is missing', async () => {
    const p = await aPartner(svc.deps);
    for (const [csv, missing] of [
      ['naam,plaats\nAnna,Delft\n', 'email'],
      ['email\nanna@klant.nl\n', 'name'],
    ] as const) {
      const res = await postImport(svc, p.apiKey, { consent: true, csv });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_request' });
      expect(res.json().detail ?? res.json().message).toContain(`no ${missing}`);
      expect(res.json().detail ?? res.json().message).toContain('both the columns name (naam) and email');
    }
  });
});
