// Generated charger passwords: OCPP's character set and length, and never a leading character that a command line
// reads as an option (a password starting with `-` broke `simulate --password "$OCPP_PASSWORD"`).
import { describe, expect, it } from 'vitest';
import { GENERATED_LENGTH, generateChargerPassword, PASSWORD_PATTERN } from '../../src/domain/chargers/passwords.ts';

describe('generateChargerPassword', () => {
  it('makes 20 characters of the OCPP set, the first a letter or digit, all characters used', () => {
    const seen = new Set<string>();
    const firsts = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const p = generateChargerPassword();
      expect(p).toHaveLength(GENERATED_LENGTH);
      expect(p).toMatch(PASSWORD_PATTERN);
      expect(p).toMatch(/^[A-Za-z0-9][A-Za-z0-9*\-_=:+|@.]+$/);
      firsts.add(p[0]!);
      for (const c of p) seen.add(c);
    }
    // 3,000 × 19 characters over 71 symbols: every symbol shows up; the first place takes all 62 letters and digits
    expect(seen.size).toBe(71);
    expect(firsts.size).toBe(62);
  });
});
