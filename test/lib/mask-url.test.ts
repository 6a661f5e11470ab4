// Capability links never reach a log line: the signing, claim, unsubscribe and dashboard sign-in tokens are masked in
// the request line, also when the path is percent-encoded (the router decodes it and serves the page).
import { describe, expect, it } from 'vitest';
import { maskUrl } from '../../src/logger.ts';

describe('maskUrl', () => {
  it('masks the token of every capability path, encoded or not, and credential-like query parameters', () => {
    expect(maskUrl('/dashboard/sign-in/abcDEF123')).toBe('/dashboard/sign-in/[redacted]');
    expect(maskUrl('/mandates/tok-1?x=1')).toBe('/mandates/[redacted]?x=1');
    expect(maskUrl('/%6dandates/tok-1')).toBe('/mandates/[redacted]');
    expect(maskUrl('/dashboard/%73ign-in/abc?token=t')).toBe('/dashboard/sign-in/[redacted]?token=[redacted]');
    expect(maskUrl('/claim/%zz')).toBe('/claim/[redacted]'); // not decodable: the plain match still masks it
    expect(maskUrl('/claim/tok-2?locale=en&confirm=c0de')).toBe('/claim/[redacted]?locale=en&confirm=[redacted]'); // D129
    expect(maskUrl('/v1/accounts?limit=5')).toBe('/v1/accounts?limit=5');
    expect(maskUrl('/dashboard')).toBe('/dashboard');
  });
});
