// TLS on the service port (TLS_CERT_FILE / TLS_KEY_FILE): OCPP Security Profile 2 without a proxy (C4.2).
import https from 'node:https';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createTestService } from '../helpers/app.ts';

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
});
