// Issue 3 item 9: every onboarding route is in /openapi.json with its request and response schemas and its
// documented errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';

describe('onboarding routes in /openapi.json', () => {
  let svc: TestService;
  let doc: { paths: Record<string, Record<string, { requestBody?: unknown; parameters?: unknown[]; responses: Record<string, unknown>; security?: unknown }>> };

  beforeAll(async () => {
    svc = await createTestService();
    const res = await svc.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(() => svc.close());

  it.each([
    ['post', '/v1/accounts', ['200', '201', '400', '409', '422'], true],
    ['get', '/v1/accounts', ['200', '400'], false],
    ['post', '/v1/connections:update', ['200', '400', '404', '409', '422'], true],
    ['post', '/v1/mandate-links', ['200', '201', '400', '404', '409'], true],
    ['post', '/v1/chargers', ['200', '201', '400', '404', '409', '422'], true],
    ['get', '/v1/catalog/chargers/resolve', ['200'], false],
    ['get', '/v1/catalog/chargers', ['200', '400'], false],
    ['post', '/admin/catalog/models', ['201', '400'], true],
    ['post', '/admin/ean-register', ['201', '400'], true],
    ['post', '/sandbox/connections/{connection_id}/sign-mandate', ['200', '404', '409'], true],
    ['post', '/sandbox/ean-recheck', ['200'], true],
    ['get', '/mandates/{token}', ['200', '404', '410'], false],
    ['post', '/mandates/{token}', ['200', '303', '400', '404', '409', '410'], true],
  ])('%s %s', (method, path, statuses, hasBody) => {
    const op = doc.paths[path]?.[method];
    expect(op, `${method} ${path}`).toBeDefined();
    for (const s of statuses) expect(op!.responses, `${method} ${path} ${s}`).toHaveProperty(s);
    if (hasBody) expect(op!.requestBody).toBeDefined();
  });

  it('documents the error codes of POST /v1/accounts', () => {
    const text = JSON.stringify(doc.paths['/v1/accounts']!.post!.responses);
    for (const code of ['invalid_type', 'invalid_payout_handler', 'invalid_iban', 'person_required', 'invalid_ean', 'address_required', 'ean_in_use', 'ean_address_mismatch', 'ean_not_dutch']) {
      expect(text).toContain(code);
    }
  });
});
