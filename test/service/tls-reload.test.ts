// D261: a renewed certificate is served without a restart: the service process watches its TLS files and reloads
// them on a change or on SIGHUP; a set that does not check is refused with one warning and the old one kept; a
// connection opened before the reload keeps working.
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const ONE = { cert: fs.readFileSync(path.join(FIXTURES, 'test-only-tls-cert.pem')), key: fs.readFileSync(path.join(FIXTURES, 'test-only-tls-key.pem')) };
const TWO = { cert: fs.readFileSync(path.join(FIXTURES, 'test-only-tls-cert-2.pem')), key: fs.readFileSync(path.join(FIXTURES, 'test-only-tls-key-2.pem')) };

/** the subject CN of the certificate a new TLS connection to the service is given */
function servedCn(url: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: u.hostname, port: Number(u.port), rejectUnauthorized: false }, () => {
      const cn = s.getPeerCertificate().subject?.CN;
      s.end();
      resolve(String(cn));
    });
    s.on('error', reject);
  });
}

function get(url: string, agent: https.Agent): Promise<{ status: number; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { agent, rejectUnauthorized: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
    });
    req.on('error', reject);
  });
}

async function until(what: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('a renewed TLS certificate is served without a restart (D261)', () => {
  let dir: string;
  let db: TestDb | undefined;
  const started: ServiceProcess[] = [];
  const write = (set: { cert: Buffer; key: Buffer }) => {
    fs.writeFileSync(path.join(dir, 'cert.pem'), set.cert);
    fs.writeFileSync(path.join(dir, 'key.pem'), set.key);
  };
  const start = async (env: Record<string, string>) => {
    const svc = await startServiceProcess({
      TLS_CERT_FILE: path.join(dir, 'cert.pem'),
      TLS_KEY_FILE: path.join(dir, 'key.pem'),
      DATA_DIR: fs.mkdtempSync(path.join(dir, 'data-')),
      APP_ENV: 'sandbox',
      JOBS_ENABLED: 'false',
      // both processes of this file share the test's database, so they share its data key (D153)
      DATA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      ...(db?.url ? { DATABASE_URL: db.url } : {}),
      ...env,
    });
    started.push(svc);
    return svc;
  };
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-tls-reload-'));
    if (process.env.DATABASE_URL) db = await createTestDb();
  });
  afterAll(async () => {
    for (const s of started) await s.kill('SIGTERM');
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('takes new files when they change, keeps the old certificate for a set that does not check, and keeps open connections', async () => {
    write(ONE);
    const svc = await start({ TLS_RELOAD_CHECK_SECONDS: '1' });
    expect(svc.url).toMatch(/^https:/);
    expect(await servedCn(svc.url)).toBe('localhost');
    const metrics = async () => (await new Promise<string>((resolve, reject) => {
      https.get(`${svc.url}/metrics`, { rejectUnauthorized: false }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve(body));
      }).on('error', reject);
    }));
    const expiry = (text: string) => Number(/^tls_certificate_expiry_timestamp_seconds (\S+)$/m.exec(text)?.[1]);
    // the fixture's certificate expires on 29 October 2126
    expect(new Date(expiry(await metrics()) * 1000).toISOString().slice(0, 10)).toBe('2126-10-29');

    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    expect(await get(`${svc.url}/healthz`, agent)).toEqual({ status: 200, reused: false });

    // a key that is not the certificate's (the certificate renewed, its key not yet written): refused, the old one kept
    fs.writeFileSync(path.join(dir, 'cert.pem'), TWO.cert);
    await until(() => svc.output().includes('"event":"tls.reload_failed"'));
    expect(await servedCn(svc.url)).toBe('localhost');
    expect(svc.output()).toMatch(/is not the private key of the certificate in TLS_CERT_FILE/);

    // the key follows: the new pair is served to new connections
    fs.writeFileSync(path.join(dir, 'key.pem'), TWO.key);
    await until(async () => (await servedCn(svc.url)) === 'localhost-renewed');
    expect(svc.output()).toMatch(/"event":"tls\.reloaded","trigger":"change","subject":"CN=localhost-renewed"/);
    // the connection opened before the reload still answers
    expect(await get(`${svc.url}/healthz`, agent)).toEqual({ status: 200, reused: true });
    agent.destroy();
    // no key material in the output
    expect(svc.output()).not.toContain('PRIVATE KEY');
    expect(svc.alive()).toBe(true);
  });

  it('reloads at once on SIGHUP, without waiting for the next check, and does not stop', async () => {
    write(ONE);
    const svc = await start({ TLS_RELOAD_CHECK_SECONDS: '3600' });
    expect(await servedCn(svc.url)).toBe('localhost');
    write(TWO);
    svc.child.kill('SIGHUP');
    await until(async () => (await servedCn(svc.url)) === 'localhost-renewed', 10_000);
    expect(svc.output()).toMatch(/"event":"tls\.reloaded","trigger":"SIGHUP"/);
    expect(svc.alive()).toBe(true);
    expect((await fetchStatus(`${svc.url}/readyz`))).toBe(200);
  });

  it.runIf(Boolean(process.env.DATABASE_URL))('WORKERS=2: SIGHUP to the primary reloads every worker and stops none', async () => {
    write(ONE);
    const svc = await start({ TLS_RELOAD_CHECK_SECONDS: '3600', WORKERS: '2' });
    write(TWO);
    svc.child.kill('SIGHUP');
    await until(() => (svc.output().match(/"event":"tls\.reloaded","trigger":"SIGHUP"/g) ?? []).length === 2, 10_000);
    // new connections, spread over both workers by the primary, all get the new certificate
    const cns = [];
    for (let i = 0; i < 6; i++) cns.push(await servedCn(svc.url));
    expect(new Set(cns)).toEqual(new Set(['localhost-renewed']));
    expect(svc.alive()).toBe(true);
    expect(svc.output()).not.toMatch(/a worker exited/);
  }, 120_000); // a cluster's first start on a machine the whole suite loads
});

function fetchStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    https.get(url, { rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}
