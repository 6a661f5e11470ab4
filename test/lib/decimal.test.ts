// parseBoundedDec (src/lib/decimal.ts): a decimal from outside as integer units, bounded (C4.10). The whole-number
// case has a path of its own (a meter's register, read for every sampled value); it must give what the general
// rule gives, which is written out here independently of the code.
import { expect, it } from 'vitest';
import { parseBoundedDec } from '../../src/lib/decimal.ts';

/** The rule for a whole number's digits: units = n × 10^scale, null beyond 15 significant or maxIntDigits digits. */
function expectedWhole(text: string, scale: number, maxIntDigits: number): bigint | null {
  const neg = text.startsWith('-');
  const digits = text.replace(/^[+-]/, '').replace(/^0+/, '');
  if (digits === '') return 0n;
  if (digits.replace(/0+$/, '').length > 15 || digits.length > maxIntDigits) return null;
  const units = BigInt(digits) * 10n ** BigInt(scale);
  return neg ? -units : units;
}

it('reads whole numbers, as text and as JSON numbers, exactly as the general rule', () => {
  let seed = 11;
  const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const texts: string[] = ['0', '00', '000000000000000', '7', '0007', '999999999999999', '1000000000000000', '100000000000000', '-5', '-0', '+12'];
  for (let k = 0; k < 3000; k++) {
    const len = 1 + rnd(18);
    let t = '';
    for (let i = 0; i < len; i++) t += String(rnd(10));
    if (rnd(5) === 0) t = '0'.repeat(rnd(4)) + t;
    if (rnd(8) === 0) t = '-' + t;
    texts.push(t);
  }
  for (const t of texts) {
    for (const [scale, maxIntDigits] of [[6, 15], [0, 15], [3, 12], [2, 9]] as const) {
      expect(parseBoundedDec(t, scale, maxIntDigits), `${t} scale ${scale} max ${maxIntDigits}`).toBe(expectedWhole(t, scale, maxIntDigits));
      const n = Number(t);
      if (Number.isSafeInteger(n)) expect(parseBoundedDec(n, scale, maxIntDigits), `number ${n}`).toBe(expectedWhole(String(n), scale, maxIntDigits));
    }
  }
});

it('reads fractions, exponents and padded text, rounding half away from zero, and refuses what is not a bounded number', () => {
  expect(parseBoundedDec('12.345', 3)).toBe(12345n);
  expect(parseBoundedDec('12.3455', 3)).toBe(12346n);
  expect(parseBoundedDec('-12.3455', 3)).toBe(-12346n);
  expect(parseBoundedDec(' 42 ', 0)).toBe(42n);
  expect(parseBoundedDec('1e3', 0)).toBe(1000n);
  expect(parseBoundedDec(1.5, 6)).toBe(1_500_000n);
  expect(parseBoundedDec('.5', 0)).toBe(1n);
  expect(parseBoundedDec('1e15', 0)).toBeNull();
  expect(parseBoundedDec('1e999999', 6)).toBeNull();
  expect(parseBoundedDec('', 6)).toBeNull();
  expect(parseBoundedDec('12a', 6)).toBeNull();
  expect(parseBoundedDec('.', 6)).toBeNull();
  expect(parseBoundedDec(Number.NaN, 6)).toBeNull();
  expect(parseBoundedDec(Number.POSITIVE_INFINITY, 6)).toBeNull();
  expect(parseBoundedDec(1e21, 6)).toBeNull();
  expect(parseBoundedDec('1234567890123456', 0)).toBeNull();
  expect(parseBoundedDec('1234567890123450', 0, 16)).toBe(1234567890123450n);
});
