// C0.6: IBANs are encrypted at rest with AES-256-GCM. Key: DATA_ENCRYPTION_KEY (32 bytes, base64); in
// sandbox without one, a key is generated into DATA_DIR on first start. Production without a key refuses
// to start. Stored form: "v1:<iv b64>:<tag b64>:<ciphertext b64>".
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface Cipher {
  encrypt(plain: string): string;
  decrypt(stored: string): string;
  /** A keyed MAC of `data` (HMAC-SHA256, base64url) under a key derived from the data key: codes the service checks later without storing them. */
  mac(data: string): string;
}

export function createCipher(key: Buffer): Cipher {
  if (key.length !== 32) throw new Error('encryption key must be 32 bytes');
  // a key of its own for MACs: the data key itself is only ever used for AES-GCM
  const macKey = crypto.createHmac('sha256', key).update('ere-gateway mac v1').digest();
  return {
    mac(data) {
      return crypto.createHmac('sha256', macKey).update(data).digest('base64url');
    },
    encrypt(plain) {
      const iv = crypto.randomBytes(12);
      const c = crypto.createCipheriv('aes-256-gcm', key, iv);
      const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return ['v1', iv.toString('base64'), c.getAuthTag().toString('base64'), ct.toString('base64')].join(':');
    },
    decrypt(stored) {
      const [v, iv, tag, ct] = stored.split(':');
      if (v !== 'v1' || !iv || !tag || !ct) throw new Error('unknown ciphertext format');
      const d = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
      d.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([d.update(Buffer.from(ct, 'base64')), d.final()]).toString('utf8');
    },
  };
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
