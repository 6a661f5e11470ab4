// Fixed-point decimal arithmetic on bigint (money and energy are never added as binary floats).
// A Dec is an integer count of 10^-scale units: toDec('12.345', 3) = 12345n.

export function toDec(value: string | number | bigint, scale: number): bigint {
  if (typeof value === 'bigint') return value * 10n ** BigInt(scale);
  const s = typeof value === 'number' ? numberToPlain(value) : value.trim();
  const m = /^([+-])?(\d*)(?:\.(\d*))?$/.exec(s);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new Error(`not a decimal: ${value}`);
  const neg = m[1] === '-';
  const int = m[2] || '0';
  const frac = m[3] ?? '';
  // round half away from zero at `scale` digits
  const kept = (frac + '0'.repeat(scale)).slice(0, scale);
  const next = frac.length > scale ? Number(frac[scale]) : 0;
  let units = BigInt(int) * 10n ** BigInt(scale) + BigInt(kept || '0');
  if (next >= 5) units += 1n;
  return neg ? -units : units;
}

function numberToPlain(n: number): string {
  if (!Number.isFinite(n) || Math.abs(n) >= 1e21) throw new Error(`not a usable number: ${n}`);
  // String(n) is the shortest text that round-trips: what the client wrote in its JSON (0.1 → "0.1").
  const s = String(n);
  return /e/i.test(s) ? n.toFixed(20) : s;
}

/** a / b rounded half away from zero (both bigint units). */
export function divRound(a: bigint, b: bigint): bigint {
  if (b === 0n) throw new Error('division by zero');
  const neg = a < 0n !== b < 0n;
  const aa = a < 0n ? -a : a;
  const bb = b < 0n ? -b : b;
  const q = (aa * 2n + bb) / (2n * bb);
  return neg ? -q : q;
}

/** Change the scale of a Dec, rounding half away from zero when it shrinks. */
export function rescale(units: bigint, from: number, to: number): bigint {
  if (to >= from) return units * 10n ** BigInt(to - from);
  return divRound(units, 10n ** BigInt(from - to));
}

/** (a at scale sa) × (b at scale sb) → result at scale `to`, rounded. */
export function mulDec(a: bigint, sa: number, b: bigint, sb: number, to: number): bigint {
  return rescale(a * b, sa + sb, to);
}

/** Format a Dec as a plain decimal string with exactly `scale` digits. */
export function formatDec(units: bigint, scale: number): string {
  const neg = units < 0n;
  const abs = neg ? -units : units;
  const p = 10n ** BigInt(scale);
  const int = abs / p;
  const frac = (abs % p).toString().padStart(scale, '0');
  return (neg ? '-' : '') + int.toString() + (scale > 0 ? '.' + frac : '');
}

/** A Dec as a JSON number for API output (only at the edge, after all arithmetic is done). */
export function decToNumber(units: bigint, scale: number): number {
  return Number(formatDec(units, scale));
}

/** C4.10: at most this many significant digits in a number that comes from outside. */
export const MAX_SIGNIFICANT_DIGITS = 15;

/** 10^0 … 10^18 */
const POW10 = Array.from({ length: 19 }, (_, k) => 10n ** BigInt(k));
/** 10^k as a number, k = 0 … 15: a whole number below it has at most k digits */
const WHOLE_BELOW = Array.from({ length: MAX_SIGNIFICANT_DIGITS + 1 }, (_, k) => 10 ** k);

/** only the characters 0-9 */
function isDigits(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * A decimal from outside (text, or a JSON number as the client wrote it) as units of 10^-scale, or null when it
 * is not a plain number or out of bounds (C4.10): more than 15 significant digits, an exponent form, or
 * |value| ≥ 10^maxIntDigits. The exponent is bounded before any power is taken ("1e999999" never computes
 * 10^999999), so the work is linear in the text's length.
 */
export function parseBoundedDec(value: string | number, scale: number, maxIntDigits = 15): bigint | null {
  // the common case, a whole number of at most 15 digits (a meter's register): no pattern, one BigInt
  if (scale < POW10.length) {
    if (typeof value === 'number') {
      if (Number.isSafeInteger(value) && Math.abs(value) < WHOLE_BELOW[Math.min(maxIntDigits, MAX_SIGNIFICANT_DIGITS)]!) return BigInt(value) * POW10[scale]!;
    } else if (value.length > 0 && value.length <= MAX_SIGNIFICANT_DIGITS && isDigits(value)) {
      let lead = 0;
      while (lead < value.length && value.charCodeAt(lead) === 48) lead++;
      if (value.length - lead <= maxIntDigits) return BigInt(value) * POW10[scale]!;
    }
  }
  let s: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    s = String(value); // the shortest text that round-trips: what the client wrote (1e21 → "1e+21")
  } else s = value.trim();
  if (s.length === 0 || s.length > 100) return null;
  const m = /^([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,7}))?$/.exec(s);
  if (!m) return null;
  const int = m[2] ?? '';
  const frac = m[3] ?? '';
  if (int === '' && frac === '') return null;
  // value = digits × 10^exp, digits without leading or trailing zeros
  let digits = (int + frac).replace(/^0+/, '');
  let exp = (m[4] ? Number(m[4]) : 0) - frac.length;
  if (digits === '') return 0n;
  const trimmed = digits.replace(/0+$/, '');
  exp += digits.length - trimmed.length;
  digits = trimmed;
  if (digits.length > MAX_SIGNIFICANT_DIGITS) return null;
  if (digits.length + exp > maxIntDigits) return null;
  const shift = exp + scale;
  let units: bigint;
  if (shift >= 0) units = BigInt(digits) * 10n ** BigInt(shift);
  else if (-shift > digits.length + 1) units = 0n; // below half a unit: rounds to zero
  else units = divRound(BigInt(digits), 10n ** BigInt(-shift));
  return m[1] === '-' ? -units : units;
}
