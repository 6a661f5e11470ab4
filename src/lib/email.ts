// E-mail addresses as the service accepts them (partner drafts, invites, users).

const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

/** A usable e-mail address (trimmed), or null. */
export function validEmail(raw: string | undefined): string | null {
  if (!raw) return null;
  const s = raw.trim();
  if (s.length > 254 || !EMAIL.test(s)) return null;
  const local = s.slice(0, s.lastIndexOf('@'));
  if (local.length > 64 || local.startsWith('.') || local.endsWith('.') || local.includes('..')) return null;
  return s;
}
