// OCPP Security Profile 3 (issue 10 item 8): with TLS_CLIENT_CA_FILE set, a charger's upgrade must carry a client
// certificate signed by that CA whose subject CN is its identity; the HTTP API on the same TLS port still answers
// clients without a certificate. The CA and certificates are made here, at test time (node-forge; keys from
// node:crypto), never by an openssl binary.
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, bootPayload, ocppClient, type TestCharger } from '../helpers/ocpp-factories.ts';

interface Issued {
  cert: string;
  key: string;
}
interface Ca extends Issued {
  forgeCert: forge.pki.Certificate;
  forgeKey: forge.pki.rsa.PrivateKey;
}

function rsaKeys() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return {
    keyPem,
    forgeKey: forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey,
    forgePublic: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()),
  };
}

let serial = 1;
function certificate(
  cn: string,
  keys: ReturnType<typeof rsaKeys>,
  issuer: { cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey } | 'self',
  extensions: object[],
  validDays = 1,
) {
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.forgePublic;
  cert.serialNumber = (serial++).toString(16).padStart(2, '0');
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + validDays * 86400_000);
  cert.setSubject([{ name: 'commonName', value: cn }]);
  cert.setIssuer(issuer === 'self' ? cert.subject.attributes : issuer.cert.subject.attributes);
  cert.setExtensions(extensions);
  cert.sign(issuer === 'self' ? keys.forgeKey : issuer.key, forge.md.sha256.create());
  return cert;
}

function makeCa(name: string): Ca {
  const keys = rsaKeys();
  const cert = certificate(name, keys, 'self', [
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
  ]);
  return { cert: forge.pki.certificateToPem(cert), key: keys.keyPem, forgeCert: cert, forgeKey: keys.forgeKey };
}

function issue(ca: Ca, cn: string, kind: 'server' | 'client', validDays = 1): Issued {
  const keys = rsaKeys();
  const cert = certificate(cn, keys, { cert: ca.forgeCert, key: ca.forgeKey }, [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: kind === 'server', clientAuth: kind === 'client' },
    ...(kind === 'server' ? [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] }] : []),
  ], validDays);
  return { cert: forge.pki.certificateToPem(cert), key: keys.keyPem };
}

const ca = makeCa('Test Charger CA');
const otherCa = makeCa('Somebody Else CA');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-sp3-'));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};
const server = issue(ca, 'localhost', 'server');
const TLS_ENV = {
  TLS_CERT_FILE: file('server.pem', server.cert),
  TLS_KEY_FILE: file('server.key', server.key),
  TLS_CLIENT_CA_FILE: file('ca.pem', ca.cert),
};

const lines: Array<Record<string, unknown>> = [];
const sink = new Writable({
  write(chunk, _enc, cb) {
    for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
    cb();
  },
});

let svc: TestService;
let cp1: TestCharger;
let cp2: TestCharger;

beforeAll(async () => {
  svc = await createTestService({ listen: true, env: TLS_ENV, logger: createLogger({ level: 'info', destination: sink }) });
  const user = await aUser(svc.deps);
  cp1 = await anOcppCharger(svc, user);
  cp2 = await anOcppCharger(svc, user);
});
afterAll(async () => {
  await svc?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** opens a charger socket presenting this certificate (or none); 101 when it opened, else the refusal status */
async function connectWith(identity: string, cert: Issued | null, password?: string): Promise<number> {
  const cli = ocppClient(svc, identity, password ?? '', ['ocpp1.6'], {
    ...(password === undefined ? { password: undefined } : {}),
    wsOpts: { ca: ca.cert, ...(cert ? { cert: cert.cert, key: cert.key } : {}) },
  } as never);
  try {
    await cli.connect();
  } catch (err) {
    return (err as { code?: number }).code ?? -1;
  }
  try {
    const res = (await cli.call('BootNotification', bootPayload('ocpp1.6'))) as { status: string };
    expect(res.status).toBe('Accepted');
    return 101;
  } finally {
    await cli.close();
  }
}

const refusalReason = (identity: string) =>
  lines.filter((l) => l.identity === identity && typeof l.reason === 'string').map((l) => l.reason).at(-1);

describe('Security Profile 3', () => {
  it('connects a charger whose certificate is signed by the CA and names its identity, with no password', async () => {
    expect(svc.url).toMatch(/^https:/);
    expect(await connectWith(cp1.identity, issue(ca, cp1.identity, 'client'))).toBe(101);
    // profile 3 authenticates by certificate: a stale password sent alongside is not checked
    expect(await connectWith(cp1.identity, issue(ca, cp1.identity, 'client'), 'stale-password-from-profile-2')).toBe(101);
  });

  it('refuses the certificate of another identity (403 client_cert_cn_mismatch)', async () => {
    expect(await connectWith(cp2.identity, issue(ca, cp1.identity, 'client'), cp2.password)).toBe(403);
    expect(refusalReason(cp2.identity)).toBe('client_cert_cn_mismatch');
  });

  it('refuses a certificate from another CA and an expired one (401 client_cert_untrusted)', async () => {
    expect(await connectWith(cp1.identity, issue(otherCa, cp1.identity, 'client'), cp1.password)).toBe(401);
    expect(refusalReason(cp1.identity)).toBe('client_cert_untrusted');
    expect(await connectWith(cp2.identity, issue(ca, cp2.identity, 'client', -1), cp2.password)).toBe(401);
    expect(refusalReason(cp2.identity)).toBe('client_cert_untrusted');
  });

  it('refuses an upgrade without a certificate, even with the right password (401 client_cert_missing)', async () => {
    expect(await connectWith(cp1.identity, null, cp1.password)).toBe(401);
    expect(refusalReason(cp1.identity)).toBe('client_cert_missing');
  });

  it('refuses an unregistered identity that holds a valid certificate (401)', async () => {
    expect(await connectWith('NOT-REGISTERED-1', issue(ca, 'NOT-REGISTERED-1', 'client'))).toBe(401);
    expect(refusalReason('NOT-REGISTERED-1')).toBe('unknown_identity');
  });

  it('still answers the HTTP API on the same TLS port to a client without a certificate', async () => {
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      https
        .get(`${svc.url}/healthz`, { ca: ca.cert }, (r) => {
          let body = '';
          r.on('data', (c) => (body += c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
        })
        .on('error', reject);
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ status: 'ok' });
  });

  it('needs TLS on the port and a CA file that exists', () => {
    const keys = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (e) {
        return (e as ConfigError).issues.map((i) => i.key);
      }
      return [];
    };
    expect(keys({ TLS_CLIENT_CA_FILE: TLS_ENV.TLS_CLIENT_CA_FILE })).toEqual(['TLS_CLIENT_CA_FILE']);
    expect(keys({ ...TLS_ENV, TLS_CLIENT_CA_FILE: path.join(dir, 'missing.pem') })).toEqual(['TLS_CLIENT_CA_FILE']);
    expect(keys(TLS_ENV)).toEqual([]);
  });
});
