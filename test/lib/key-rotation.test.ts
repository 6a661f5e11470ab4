// D251: the data-encryption key rotates. The current key encrypts (v2, naming its key by an HMAC fingerprint, while
// previous keys are configured; v1 without them, so a release before reads it during a rolling upgrade) and decrypts; DATA_ENCRYPTION_KEYS_PREVIOUS only decrypt; v1 ciphertexts (no key named) keep decrypting under whichever
// configured key made them; MAC codes issued under a previous key keep verifying.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createCipher, keyIdOf, previousKeys } from '../../src/lib/iban-crypto.ts';

const IBAN = 'NL91ABNA0417164300';
const A = crypto.randomBytes(32);
const B = crypto.randomBytes(32);
const C = crypto.randomBytes(32);

/** What the code before key rotation stored: "v1:<iv>:<tag>:<ciphertext>", no key named. */
function v1(key: Buffer, plain: string): string {
  const iv = crypto.randomBytes(12);
  const c = crypto.createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64'), c.getAuthTag().toString('base64'), ct.toString('base64')].join(':');
}

/** A claim-link code as the code before key rotation made it (D129): HMAC under a key derived from the data key. */
function v1Mac(key: Buffer, data: string): string {
  const macKey = crypto.createHmac('sha256', key).update('ere-gateway mac v1').digest();
  return crypto.createHmac('sha256', macKey).update(data).digest('base64url');
}

describe('key rotation: the cipher (D251)', () => {
  it('v2 round trip while a rotation is configured: the ciphertext names its key, a fresh IV each time, never the plain text', () => {
    const c = createCipher(A, [B]);
    const x = c.encrypt(IBAN);
    const parts = x.split(':');
    expect(parts).toHaveLength(5);
    expect(parts[0]).toBe('v2');
    expect(parts[1]).toBe(c.keyId);
    expect(c.keyId).toBe(keyIdOf(A));
    expect(x).not.toContain(IBAN);
    expect(c.encrypt(IBAN)).not.toBe(x);
    expect(c.decrypt(x)).toBe(IBAN);
    expect(c.open(x)).toEqual({ plain: IBAN, keyId: c.keyId, current: true });
  });

  it('without previous keys the first format is written: a process of the release before reads it (a rolling upgrade)', () => {
    const c = createCipher(A);
    const x = c.encrypt(IBAN);
    expect(x.split(':')).toHaveLength(4);
    expect(x.startsWith('v1:')).toBe(true);
    // what the release before did to open it: the one key, the format it knows
    const [, iv, tag, ct] = x.split(':') as [string, string, string, string];
    const d = crypto.createDecipheriv('aes-256-gcm', A, Buffer.from(iv, 'base64'));
    d.setAuthTag(Buffer.from(tag, 'base64'));
    expect(Buffer.concat([d.update(Buffer.from(ct, 'base64')), d.final()]).toString('utf8')).toBe(IBAN);
    expect(c.open(x)).toEqual({ plain: IBAN, keyId: c.keyId, current: true });
  });

  it('v1 ciphertexts (before rotation) still decrypt, under the current key or a previous one', () => {
    expect(createCipher(A).decrypt(v1(A, IBAN))).toBe(IBAN);
    const rotated = createCipher(B, [A]);
    expect(rotated.decrypt(v1(A, IBAN))).toBe(IBAN);
    expect(rotated.decrypt(v1(B, IBAN))).toBe(IBAN);
    // a v1 value is current when its tag is the current key's: the re-encryption writes only the other key's again
    expect(rotated.open(v1(A, IBAN))).toEqual({ plain: IBAN, keyId: keyIdOf(A), current: false });
    expect(rotated.open(v1(B, IBAN))).toEqual({ plain: IBAN, keyId: keyIdOf(B), current: true });
  });

  it('a previous key decrypts what it made; new data is under the current key; both sides of a rotation read each other', () => {
    const step1 = createCipher(A, [B]); // step 1: new key B known, A still encrypts
    const step2 = createCipher(B, [A]); // step 2: B encrypts, A only decrypts
    const fromStep1 = step1.encrypt(IBAN);
    const fromStep2 = step2.encrypt(IBAN);
    expect(fromStep1.split(':')[1]).toBe(keyIdOf(A));
    expect(fromStep2.split(':')[1]).toBe(keyIdOf(B));
    expect(step2.decrypt(fromStep1)).toBe(IBAN);
    expect(step1.decrypt(fromStep2)).toBe(IBAN);
    expect(step2.open(fromStep1)).toEqual({ plain: IBAN, keyId: keyIdOf(A), current: false });
    // step 4: the old key dropped; what step 2 wrote still decrypts, what only A opens does not
    const step4 = createCipher(B, [C]);
    expect(step4.decrypt(fromStep2)).toBe(IBAN);
    expect(() => step4.decrypt(fromStep1)).toThrow(/not configured/);
  });

  it('wrong keys fail: another key, a tampered value, an unknown key id, an unknown format', () => {
    const c = createCipher(A, [B]);
    expect(() => c.decrypt(createCipher(C, [B]).encrypt(IBAN))).toThrow(/not configured/);
    expect(() => c.decrypt(v1(C, IBAN))).toThrow(/no configured key/);
    // a v2 value whose key id was changed to one of ours: the tag refuses it
    const underC = createCipher(C, [B]).encrypt(IBAN).split(':');
    underC[1] = keyIdOf(A);
    expect(() => c.decrypt(underC.join(':'))).toThrow();
    const [v, id, iv, tag, ct] = c.encrypt(IBAN).split(':');
    const flipped = Buffer.from(ct!, 'base64');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => c.decrypt([v, id, iv, tag, flipped.toString('base64')].join(':'))).toThrow();
    expect(() => c.decrypt('v3:x:y:z:w')).toThrow(/unknown ciphertext format/);
    expect(() => c.decrypt('v2:only:three')).toThrow(/unknown ciphertext format/);
    expect(() => createCipher(A, [Buffer.alloc(16)])).toThrow(/32 bytes/);
  });

  it('the key id never is, contains or is contained in the key (any encoding), and tells keys apart', () => {
    for (const key of [A, B, C, Buffer.alloc(32, 0), Buffer.alloc(32, 0xff)]) {
      const id = keyIdOf(key);
      expect(id).toMatch(/^[A-Za-z0-9_-]{12}$/);
      for (const enc of ['base64', 'base64url', 'hex', 'latin1'] as const) {
        const k = key.toString(enc);
        expect(k).not.toContain(id);
        expect(id).not.toContain(k);
      }
    }
    expect(new Set([A, B, C].map(keyIdOf)).size).toBe(3);
    // and a ciphertext carries only that id: none of the key's bytes
    const x = createCipher(A).encrypt(IBAN);
    expect(x).not.toContain(A.toString('base64'));
    expect(x).not.toContain(A.toString('hex'));
  });

  it('MAC codes: made under the current key; one made under a previous key (before the rotation) still verifies', () => {
    const data = 'claim-link:draft-1:user-1';
    const before = v1Mac(A, data); // a code e-mailed before the rotation
    expect(createCipher(A).mac(data)).toBe(before); // the same codes as before this change
    const step2 = createCipher(B, [A]);
    expect(step2.mac(data)).not.toBe(before);
    expect(step2.verifyMac(data, before)).toBe(true);
    expect(step2.verifyMac(data, step2.mac(data))).toBe(true);
    expect(createCipher(A, [B]).verifyMac(data, step2.mac(data))).toBe(true);
    expect(step2.verifyMac('claim-link:draft-1:user-2', before)).toBe(false);
    expect(step2.verifyMac(data, 'forged')).toBe(false);
    expect(createCipher(B).verifyMac(data, before)).toBe(false); // the old key dropped: its codes end
    expect(createCipher(C, [A]).keys('label').map((k) => [k.keyId, k.current])).toEqual([[keyIdOf(C), true], [keyIdOf(A), false]]);
  });
});

describe('DATA_ENCRYPTION_KEYS_PREVIOUS (D251)', () => {
  const b64 = (k: Buffer) => k.toString('base64');

  it('comma-separated base64 keys of 32 bytes, spaces allowed; unset or empty means none', () => {
    const c = loadConfig({ DATA_ENCRYPTION_KEY: b64(A), DATA_ENCRYPTION_KEYS_PREVIOUS: ` ${b64(B)} , ${b64(C)} ` });
    expect(previousKeys(c.DATA_ENCRYPTION_KEYS_PREVIOUS).map((k) => k.toString('hex'))).toEqual([B.toString('hex'), C.toString('hex')]);
    expect(loadConfig({ DATA_ENCRYPTION_KEYS_PREVIOUS: '' }).DATA_ENCRYPTION_KEYS_PREVIOUS).toBeUndefined();
    expect(previousKeys(undefined)).toEqual([]);
  });

  it('a bad entry is one configuration error naming the variable and the entry, never echoing a key', () => {
    const short = crypto.randomBytes(16).toString('base64');
    for (const [value, message] of [
      [`${b64(B)},${short}`, 'DATA_ENCRYPTION_KEYS_PREVIOUS: entry 2 of 2 must be 32 bytes, base64 encoded'],
      [short, 'DATA_ENCRYPTION_KEYS_PREVIOUS: must be 32 bytes, base64 encoded'],
      [`${b64(B)},,${b64(C)}`, 'DATA_ENCRYPTION_KEYS_PREVIOUS: entry 2 of 3 must be 32 bytes'],
    ] as const) {
      let err: unknown;
      try {
        loadConfig({ DATA_ENCRYPTION_KEY: b64(A), DATA_ENCRYPTION_KEYS_PREVIOUS: value });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).issues.map((i) => i.key)).toEqual(['DATA_ENCRYPTION_KEYS_PREVIOUS']);
      const text = (err as ConfigError).message;
      expect(text).toContain(message);
      expect(text.split('\n')).toHaveLength(2); // the header and one line
      for (const secret of [b64(A), b64(B), b64(C), short]) expect(text).not.toContain(secret);
    }
  });
});
