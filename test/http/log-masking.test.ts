// D220: a live capability token never reaches a log line, whatever the URL it is sent in: the exact route's path was
// masked, but `/claim//T`, `/Claim/T`, `//claim/T`, `/x/../claim/T` and `/claim;x/T` (all 404) logged T in clear.
// D221: every line says which process wrote it.
import http from 'node:http';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, maskUrl } from '../../src/logger.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner } from '../helpers/factories.ts';
import { postCustomers, tokenOf } from '../helpers/partner-factories.ts';
import { logSink } from '../helpers/raw-upgrade.ts';

const log = logSink();
let svc: TestService;
let token: string;

beforeAll(async () => {
  svc = await createTestService({ listen: true, logger: createLogger({ level: 'info', destination: log.sink }) });
  const partner = await aPartner(svc.deps);
  const res = await postCustomers(svc, partner.apiKey, { consent: true, send_invite: false, customers: [{ name: 'Olga', email: 'olga-d220@klant.nl' }] });
  expect(res.statusCode).toBe(200);
  token = tokenOf(res.json().claim_urls[0].claim_url as string);
});
afterAll(() => svc?.close());

/** A GET with the path exactly as written (fetch would resolve `..` and leave nothing odd to send). */
function rawGet(path: string): Promise<number> {
  const { hostname, port } = new URL(svc.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port: Number(port), path, method: 'GET' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('D220: tokens are masked in the request line whatever the route', () => {
  it('the claim token is live, and no odd path to it writes it into a log line', async () => {
    expect(await rawGet(`/claim/${token}`)).toBe(200); // a live token: the claim page answers
    const odd = [
      `/claim//${token}`,
      `/Claim/${token}`,
      `//claim/${token}`,
      `/x/../claim/${token}`,
      `/claim;x/${token}`,
      `/claim/${token}/`,
      `/claim/${token}.html`,
      `/nothing/here?next=/claim/${token}`,
      `/nothing?token=short&k=${token}`,
      `/claim/%${token.charCodeAt(0).toString(16)}${token.slice(1)}`,
    ];
    // the router serves some of them (the percent-encoded one is the claim page), the others are 404: none may log T
    for (const path of odd) await rawGet(path);
    const incoming = log.lines.filter((l) => l.msg === 'incoming request');
    // every request was logged (so the test would see the token), each by this process (D221)
    expect(incoming.length).toBeGreaterThanOrEqual(odd.length + 1);
    for (const line of incoming) expect(line).toMatchObject({ pid: process.pid, hostname: os.hostname(), service: 'ere-gateway' });
    for (const raw of log.raw) expect(raw).not.toContain(token);
    expect(incoming.map((l) => (l.req as { url: string }).url)).toContain('/Claim/[redacted]');
    expect(log.raw.join('\n')).not.toContain(token.slice(1));
  });

  it('ids an operator needs stay readable: a UUID, an EAN, the route words', async () => {
    const id = '3f0e0c84-5b8e-4a8f-9a57-0f6b1c1d2e3f';
    await rawGet(`/admin/chargers/${id}?ean=871234567890123456&return-to-overview-page=1`);
    const urls = log.lines.filter((l) => l.msg === 'incoming request').map((l) => (l.req as { url: string }).url);
    expect(urls).toContain(`/admin/chargers/${id}?ean=871234567890123456&return-to-overview-page=1`);
  });

  it('maskUrl: every token-shaped run, and the value of every credential-named query parameter', () => {
    const t = 'Xy3_kq-9ZpLm0aBcDeFgHiJk';
    expect(maskUrl(`/claim//${t}`)).toBe('/claim//[redacted]');
    expect(maskUrl(`/a;b=${t}/c`)).toBe('/a;b=[redacted]/c');
    expect(maskUrl(`/p?api_key=abc&x=1&reset_code=12&Password=p&%74oken=q`)).toBe('/p?api_key=[redacted]&x=1&reset_code=[redacted]&Password=[redacted]&%74oken=[redacted]');
    expect(maskUrl(`/p?x=${t}#frag`)).toBe('/p?x=[redacted]#frag');
    expect(maskUrl('/v1/sessions?limit=20&from=2026-01-01')).toBe('/v1/sessions?limit=20&from=2026-01-01');
  });
});
