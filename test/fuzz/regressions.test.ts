// Fixed findings of the fuzz test (edge.fuzz.test.ts), each replayed as one request so a regression shows
// without a fuzz run.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService();
});
afterAll(() => svc.close());

// fuzz seed 1: POST /mandates/<token> with a body that is not a form answered 500 FST_ERR_RESPONSE_SERIALIZATION
// (the JSON error did not match the page's HTML-only 400 schema)
it.each([
  ['application/json', '[[['],
  ['application/json', '[]'],
  ['application/json; charset=utf-16', '[[[[[['],
])('POST /mandates/<token> with %s %s answers 400 in the error shape', async (ctype, body) => {
  const res = await svc.app.inject({ method: 'POST', url: '/mandates/abc', headers: { 'content-type': ctype }, payload: body });
  expect(res.statusCode).toBe(400);
  expect(res.json()).toMatchObject({ error: expect.any(String) });
});
