// C0.6: IBANs (and mandate-link tokens) are encrypted at rest with AES-256-GCM. Key: DATA_ENCRYPTION_KEY (32 bytes,
// base64); in sandbox without one, a key is generated into DATA_DIR on first start. Production without a key refuses
// to start. D251: the key can be rotated. DATA_ENCRYPTION_KEYS_PREVIOUS holds older keys that only decrypt, and
// every ciphertext names the key that made it: "v2:<key id>:<iv b64>:<tag b64>:<ciphertext b64>", the key id an
// HMAC fingerprint of the key (never the key). The first format, "v1:<iv>:<tag>:<ciphertext>", names no key: each
// configured key is tried, and GCM's tag tells which one made it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { timingSafeEqualStr } from './secrets.ts';

export interface Cipher {
  /** under the current key, naming it (v2) while older keys are configured, else in the first format (v1) */
  encrypt(plain: string): string;
  /** under whichever configured key made it (v2: the one it names; v1: the one whose tag matches) */
  decrypt(stored: string): string;
  /** decrypt, and say which key made it; `current`: made under the current key (nothing to re-encrypt) */
  open(stored: string): { plain: string; keyId: string; current: boolean };
  /** A keyed MAC of `data` (HMAC-SHA256, base64url) under a key derived from the current data key: codes the service checks later without storing them. */
  mac(data: string): string;
  /** whether `given` is the MAC of `data` under any configured key (a code issued before a rotation still verifies) */
  verifyMac(data: string, given: string): boolean;
  /** the configured keys, current first: their ids and their MACs of `data` (the database's key checks, D153) */
  keys(data: string): Array<{ keyId: string; mac: string; current: boolean }>;
  /** the current key's id */
  readonly keyId: string;
}

/** A key's id: a short HMAC fingerprint of it (72 bits, base64url), which gives nothing of the key away. */
export function keyIdOf(key: Buffer): string {
  return crypto.createHmac('sha256', key).update('ere-gateway key id v1').digest().subarray(0, 9).toString('base64url');
}

interface Key {
  id: string;
  key: Buffer;
  macKey: Buffer;
}

function keyOf(key: Buffer): Key {
  if (key.length !== 32) throw new Error('encryption key must be 32 bytes');
  // a key of its own for MACs: the data key itself is only ever used for AES-GCM
  return { id: keyIdOf(key), key, macKey: crypto.createHmac('sha256', key).update('ere-gateway mac v1').digest() };
}

function gcmOpen(key: Buffer, iv: string, tag: string, ct: string): string {
  const d = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
  d.setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([d.update(Buffer.from(ct, 'base64')), d.final()]).toString('utf8');
}

/** The cipher of a current key and the older keys that only decrypt (D251). */
export function createCipher(current: Buffer, previous: readonly Buffer[] = []): Cipher {
  const cur = keyOf(current);
  const all: Key[] = [cur];
  for (const p of previous) {
    const k = keyOf(p);
    if (!all.some((x) => x.id === k.id)) all.push(k);
  }
  const macOf = (k: Key, data: string) => crypto.createHmac('sha256', k.macKey).update(data).digest('base64url');
  const open = (stored: string): { plain: string; keyId: string; current: boolean } => {
    const parts = stored.split(':');
    if (parts[0] === 'v2' && parts.length === 5 && parts.every(Boolean)) {
      const [, id, iv, tag, ct] = parts as [string, string, string, string, string];
      const k = all.find((x) => x.id === id);
      if (!k) throw new Error(`encrypted under key ${id}, which is not configured`);
      return { plain: gcmOpen(k.key, iv, tag, ct), keyId: k.id, current: k === cur };
    }
    if (parts[0] === 'v1' && parts.length === 4 && parts.every(Boolean)) {
      const [, iv, tag, ct] = parts as [string, string, string, string];
      for (const k of all) {
        try {
          return { plain: gcmOpen(k.key, iv, tag, ct), keyId: k.id, current: k === cur };
        } catch {
          // another key's ciphertext: its tag does not match; try the next key
        }
      }
      throw new Error('no configured key decrypts it');
    }
    throw new Error('unknown ciphertext format');
  };
  return {
    keyId: cur.id,
    mac: (data) => macOf(cur, data),
    verifyMac: (data, given) => all.some((k) => timingSafeEqualStr(given, macOf(k, data))),
    keys: (data) => all.map((k) => ({ keyId: k.id, mac: macOf(k, data), current: k === cur })),
    encrypt(plain) {
      const iv = crypto.randomBytes(12);
      const c = crypto.createCipheriv('aes-256-gcm', cur.key, iv);
      const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      const body = [iv.toString('base64'), c.getAuthTag().toString('base64'), ct.toString('base64')];
      // D251: the key is named only while a rotation is configured: without previous keys the first format stays, so
      // a process of the release before, beside this one during a rolling upgrade, still reads what this one writes
      return (all.length > 1 ? ['v2', cur.id, ...body] : ['v1', ...body]).join(':');
    },
    decrypt: (stored) => open(stored).plain,
    open,
  };
}

/** DATA_ENCRYPTION_KEYS_PREVIOUS as keys: comma-separated base64 (config.ts has checked each is 32 bytes). */
export function previousKeys(value: string | undefined): Buffer[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => Buffer.from(s, 'base64'));
}

/** Resolve the data key: configured, else (sandbox only) generated once into DATA_DIR/data-encryption.key. */
export function resolveEncryptionKey(opts: {
  DATA_ENCRYPTION_KEY?: string | undefined;
  APP_ENV: 'sandbox' | 'production';
  DATA_DIR: string;
}): Buffer {
  if (opts.DATA_ENCRYPTION_KEY) return Buffer.from(opts.DATA_ENCRYPTION_KEY, 'base64');
  if (opts.APP_ENV === 'production') {
    throw new Error('DATA_ENCRYPTION_KEY is required in production (32 bytes, base64)');
  }
  const file = encryptionKeyFile(opts.DATA_DIR);
  if (fs.existsSync(file)) return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // D153: the workers of one first start race to create the file; it appears whole (written aside, then linked,
  // which fails when it exists), so the losers read the winner's key instead of keeping one of their own
  const draft = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
  fs.writeFileSync(draft, crypto.randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
  try {
    fs.linkSync(draft, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(draft, { force: true });
  }
  return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
}

/** Where a sandbox without DATA_ENCRYPTION_KEY keeps the key it generated. */
export function encryptionKeyFile(dataDir: string): string {
  return path.resolve(dataDir, 'data-encryption.key');
}
