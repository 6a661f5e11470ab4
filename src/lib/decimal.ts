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
