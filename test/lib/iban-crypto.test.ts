// C0.6: IBANs encrypted at rest with AES-256-GCM; the key from DATA_ENCRYPTION_KEY, or generated once into
// DATA_DIR in sandbox; production without a key refuses.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCipher, resolveEncryptionKey } from '../../src/lib/iban-crypto.ts';

const IBAN = 'NL91ABNA0417164300';

describe('IBAN encryption (C0.6)', () => {
  it('round-trips, never stores the plain text, and uses a fresh IV each time', () => {
    const c = createCipher(Buffer.alloc(32, 3));
    const a = c.encrypt(IBAN);
    const b = c.encrypt(IBAN);
    expect(a).not.toContain(IBAN);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1:/);
    expect(c.decrypt(a)).toBe(IBAN);
  });

  it('refuses a tampered ciphertext and a wrong key', () => {
    const c = createCipher(Buffer.alloc(32, 3));
    const [v, iv, tag, ct] = c.encrypt(IBAN).split(':');
    const flipped = Buffer.from(ct!, 'base64');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => c.decrypt([v, iv, tag, flipped.toString('base64')].join(':'))).toThrow();
    expect(() => createCipher(Buffer.alloc(32, 4)).decrypt(c.encrypt(IBAN))).toThrow();
    expect(() => createCipher(Buffer.alloc(16))).toThrow();
  });

  it('MACs with a key of its own: the same code for the same data and key, another for other data or another key (D129)', () => {
    const c = createCipher(Buffer.alloc(32, 3));
    const code = c.mac('claim-link:d1:u1');
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(c.mac('claim-link:d1:u1')).toBe(code);
    expect(c.mac('claim-link:d1:u2')).not.toBe(code);
    expect(createCipher(Buffer.alloc(32, 4)).mac('claim-link:d1:u1')).not.toBe(code);
  });

  it('sandbox generates a key into DATA_DIR once and reuses it; production requires one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-key-'));
    const k1 = resolveEncryptionKey({ APP_ENV: 'sandbox', DATA_DIR: dir });
    const file = path.join(dir, 'data-encryption.key');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(resolveEncryptionKey({ APP_ENV: 'sandbox', DATA_DIR: dir }).equals(k1)).toBe(true);
    const configured = Buffer.alloc(32, 9).toString('base64');
    expect(resolveEncryptionKey({ APP_ENV: 'production', DATA_DIR: dir, DATA_ENCRYPTION_KEY: configured }).equals(Buffer.alloc(32, 9))).toBe(true);
    expect(() => resolveEncryptionKey({ APP_ENV: 'production', DATA_DIR: dir })).toThrow(/DATA_ENCRYPTION_KEY/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
