// D241: the page that embeds the API reference (/docs/) as served: its language and title (the audit's axe run found
// no lang), the stylesheet that darkens the reference's low-contrast colours and wraps its code blocks, and the CSP
// left as D233 made it (the stylesheet is the page's own inline <style>, as the reference's is).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { DOCS_CSS } from '../../src/http/docs.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService();
});
afterAll(async () => svc?.close());

describe('D241: /docs/', () => {
  it('is an English page with a title and the accessibility stylesheet; the CSP is unchanged', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/^<!doctype html>\s*<html lang="en">/);
    expect(res.body).toContain('<title>ere-gateway API reference</title>');
    expect(res.body).toContain(DOCS_CSS.split('\n')[0]);
    expect(DOCS_CSS).toContain('--scalar-color-green');
    expect(DOCS_CSS).toContain('white-space: pre-wrap');
    expect(res.headers['content-security-policy']).toBe("frame-ancestors 'none'");
  });

  it('leaves the reference\'s script and document as they were', async () => {
    const js = await svc.app.inject({ method: 'GET', url: '/docs/js/scalar.js' });
    expect(js.statusCode).toBe(200);
    expect(js.body.length).toBeGreaterThan(1_000_000);
    const doc = await svc.app.inject({ method: 'GET', url: '/docs/openapi.json' });
    expect(doc.statusCode).toBe(200);
    expect(doc.json().openapi).toMatch(/^3\./);
  });
});
