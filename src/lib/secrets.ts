// Random secrets and their hashes. Credentials are high-entropy random strings, so a SHA-256 hash
// is what we store (C0.6); comparison is by hash lookup, never by the plain value.
import crypto from 'node:crypto';

export function randomSecret(prefix: string, bytes = 32): string {
  return prefix + crypto.randomBytes(bytes).toString('base64url');
}

export function hashSecret(secret: string): string {
  return crypto.createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function timingSafeEqualStr(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb) && a.length === b.length;
}

/** Short non-secret hint of a credential for logs and listings: its prefix and last 4 characters. */
export function secretHint(secret: string): string {
  const us = secret.indexOf('_', secret.indexOf('_') + 1);
  const prefix = us > 0 && us < 12 ? secret.slice(0, us + 1) : secret.slice(0, 4);
  return `${prefix}…${secret.slice(-4)}`;
}
