// TLS on the service port (TLS_CERT_FILE / TLS_KEY_FILE): OCPP Security Profile 2 without a proxy (C4.2).
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createTestService } from '../helpers/app.ts';
import { runAdminCli } from '../../src/cli/admin.ts';
import { nodeArgs } from '../helpers/service-process.ts';

// A self-signed certificate for localhost made for these tests only (no openssl needed at test time).
const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
function selfSigned(): { cert: string; key: string } {
  return { cert: path.join(FIXTURES, 'test-only-tls-cert.pem'), key: path.join(FIXTURES, 'test-only-tls-key.pem') };
}

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { rejectUnauthorized: false }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

describe('TLS on the service port', () => {
  it('serves HTTPS with the configured certificate and hands out https links', async () => {
    const { cert, key } = selfSigned();
    const svc = await createTestService({ listen: true, env: { TLS_CERT_FILE: cert, TLS_KEY_FILE: key } });
    try {
      expect(svc.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(svc.deps.config.PUBLIC_BASE_URL).toBe(svc.url);
      const res = await get(`${svc.url}/healthz`);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ status: 'ok' });
    } finally {
      await svc.close();
    }
  });

  it('needs both files, and files that exist', () => {
    const bad = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (e) {
        return (e as ConfigError).issues.map((i) => i.key).sort();
      }
      return [];
    };
    expect(bad({ TLS_CERT_FILE: selfSigned().cert })).toEqual(['TLS_KEY_FILE']);
    expect(bad({ TLS_CERT_FILE: '/nope/cert.pem', TLS_KEY_FILE: '/nope/key.pem' })).toEqual(['TLS_CERT_FILE', 'TLS_KEY_FILE']);
  });

  it('D189: files that are not PEM, or a key of another certificate, stop the start naming the key before anything is created', { timeout: 60_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-tls-'));
    try {
      const dataDir = path.join(dir, 'data');
      const r = await promisify(execFile)(process.execPath, nodeArgs('src/main.ts'), {
        env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, TLS_CERT_FILE: '/etc/hostname', TLS_KEY_FILE: '/etc/hostname' },
        timeout: 60_000,
      }).then(
        (x) => ({ code: 0, out: x.stdout + x.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
      );
      expect(r.code, r.out).toBe(1);
      expect(r.out).toMatch(/^ {2}TLS_CERT_FILE: \/etc\/hostname is not a PEM certificate/m);
      expect(r.out).toMatch(/^ {2}TLS_KEY_FILE: \/etc\/hostname is not a PEM private key/m);
      expect(r.out).not.toMatch(/^\s+at /m);
      expect(fs.existsSync(dataDir)).toBe(false);
      // a key that is not the certificate's
      const other = path.join(dir, 'other-key.pem');
      fs.writeFileSync(other, crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
      expect(() => loadConfig({ TLS_CERT_FILE: selfSigned().cert, TLS_KEY_FILE: other })).toThrow(/TLS_KEY_FILE: .* is not the private key of the certificate in TLS_CERT_FILE/);
      expect(loadConfig({ TLS_CERT_FILE: selfSigned().cert, TLS_KEY_FILE: selfSigned().key }).TLS_KEY_FILE).toBe(selfSigned().key);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('D190: the Dockerfile HEALTHCHECK and the admin CLI with TLS', () => {
  /** the HEALTHCHECK's node -e script, run with this environment; its exit code */
  async function healthcheck(env: Record<string, string>): Promise<number> {
    const m = /^\s+CMD node -e "(.*)"$/m.exec(fs.readFileSync('Dockerfile', 'utf8'));
    expect(m, 'HEALTHCHECK CMD node -e "…"').not.toBeNull();
    return promisify(execFile)(process.execPath, ['-e', m![1]!], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 }).then(
      () => 0,
      (e: { code: number }) => e.code,
    );
  }

  it('the HEALTHCHECK asks over https when TLS_CERT_FILE is set, over http otherwise', { timeout: 60_000 }, async () => {
    const { cert, key } = selfSigned();
    const tls = await createTestService({ listen: true, env: { TLS_CERT_FILE: cert, TLS_KEY_FILE: key } });
    const plain = await createTestService({ listen: true });
    try {
      const port = (u: string) => new URL(u).port;
      expect(await healthcheck({ PORT: port(tls.url), TLS_CERT_FILE: cert })).toBe(0);
      expect(await healthcheck({ PORT: port(plain.url) })).toBe(0);
      expect(await healthcheck({ PORT: port(plain.url), TLS_CERT_FILE: cert })).toBe(1); // not TLS there: unhealthy
    } finally {
      await tls.close();
      await plain.close();
    }
  });

  it('the admin CLI says why it cannot reach the service: the refused connection, the untrusted certificate', async () => {
    const { cert, key } = selfSigned();
    const tls = await createTestService({ listen: true, env: { TLS_CERT_FILE: cert, TLS_KEY_FILE: key } });
    const errs: string[] = [];
    const io = { out: () => {}, err: (t: string) => errs.push(t) };
    try {
      expect(await runAdminCli(['list-jobs'], { ADMIN_URL: tls.url, ADMIN_TOKEN: 'x'.repeat(20) }, io)).toBe(1);
      expect(errs.pop()).toMatch(/^admin: cannot reach https:\/\/127\.0\.0\.1:\d+\/admin\/jobs: .*(self-signed|certificate).*; to trust the service's own certificate, run with NODE_EXTRA_CA_CERTS=/);
    } finally {
      await tls.close();
    }
    expect(await runAdminCli(['list-jobs'], { ADMIN_URL: tls.url, ADMIN_TOKEN: 'x'.repeat(20) }, io)).toBe(1);
    expect(errs.pop()).toMatch(/ECONNREFUSED/);
  });
});

describe('D191/D190: the admin CLI exits as its --help says', () => {
  it('ADMIN_TOKEN unset is 2, as a usage error, and --help says so', async () => {
    const { HELP } = await import('../../src/cli/admin.ts');
    const io = { out: () => {}, err: () => {} };
    expect(HELP).toContain('2 for a usage error or ADMIN_TOKEN unset');
    expect(await runAdminCli(['list-jobs'], {}, io)).toBe(2);
    expect(await runAdminCli(['no-such-command'], { ADMIN_TOKEN: 'x'.repeat(20) }, io)).toBe(2);
    expect(await runAdminCli(['--help'], {}, io)).toBe(0);
  });
});
