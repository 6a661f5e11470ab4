// Hostile JSON values for the fuzzer: a Raw value is written into the frame as it is (number literals JSON
// cannot round-trip such as 1e999999, 10,000 levels of nesting, __proto__ keys), everything else as JSON.
import type { Prng } from './prng.ts';

export class Raw {
  constructor(readonly text: string) {}
}

/** JSON text of a value that may contain Raw parts (own keys only, so a '__proto__' key is written as a key). */
export function toJson(v: unknown): string {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) {
    const parts: string[] = [];
    for (let i = 0; i < v.length; i++) parts.push(toJson(v[i]));
    return '[' + parts.join(',') + ']';
  }
  if (v && typeof v === 'object') {
    return '{' + Object.entries(v).map(([k, x]) => JSON.stringify(k) + ':' + toJson(x)).join(',') + '}';
  }
  return JSON.stringify(v) ?? 'null';
}

export const deepArray = (n: number) => new Raw('['.repeat(n) + ']'.repeat(n));
export const deepObject = (n: number) => new Raw('{"a":'.repeat(n) + '1' + '}'.repeat(n));

/** keys that name Object.prototype members: used as action names and as object keys */
export const PROTO_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', '__defineGetter__'];

const CONTROL = '\u0000\u0001\u0007\b\t\n\u000b\f\r\u001b\u001f\u007f\u0085\u2028\u2029';

/** Values a charger should never send; `raw` allows Raw literals (raw frames only, not through RPCClient). */
export function nastyValue(r: Prng, raw: boolean, depth = 0): unknown {
  const k = r.int(0, raw ? 33 : 27);
  switch (k) {
    case 0: return 1e21;
    case 1: return -1e308;
    case 2: return 1e-300;
    case 3: return r.pick([0, -0, -1, 2 ** 31, 2 ** 53 + 2, Number.MAX_VALUE, -Number.MIN_VALUE, 0.1 + 0.2]);
    case 4: return r.pick(['NaN', 'Infinity', '-Infinity', 'nan', 'undefined', 'null', 'true']);
    case 5: return r.pick(['1e21', '1e999999', '-1e999999', '1e-999999', '1E+308', '9'.repeat(400), '0x1F', ' 12 ', '1_000', '١٢٣']);
    case 6: return r.pick(['', ' ', '\u0000', 'TAG\u0000', 'a\u0000b\u0000c']);
    case 7: return r.str(r.int(1, 40), CONTROL + 'ab');
    case 8: return r.pick(['🔌⚡', 'Zürich ß', '\u202eevil', '\ud800', '\udfff\ud800', 'ǅ', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '\ufeff']);
    case 9: return 'x'.repeat(r.pick([65, 256, 2049, 50_000]));
    case 10: return null;
    case 11: return r.pick([true, false]);
    case 12: return [];
    case 13: return {};
    case 14: return Object.fromEntries([[r.pick(PROTO_NAMES), depth < 2 ? nastyValue(r, raw, depth + 1) : 1]]);
    case 15: return r.int(-100, 100);
    case 16: return r.next() * 1e6;
    case 17: return r.pick(['2026-13-45T25:61:61Z', '0000-00-00T00:00:00Z', '9999-12-31T23:59:59Z', '1970-01-01T00:00:00Z', '2026-01-01', 'yesterday', '2026-01-01T00:00:00+99:99']);
    case 18: return r.pick(['Energy.Active.Import.Register', 'energy.active.import.register', 'Power.Active.Import', 'Unknown.Measurand', 'SoC']);
    case 19: return r.pick(['Wh', 'kWh', 'kwh', 'W', 'MWh', 'Celsius', '%']);
    case 20: return { unit: r.pick(['Wh', 'kWh']), multiplier: r.pick([2_000_000, 1e9, -1e9, 1e21, 7, -4, 1.5, 'x', 1e308]) };
    case 21: return Array.from({ length: r.pick([100, 1000]) }, (_, i) => ({ value: String(i), unit: 'Wh' }));
    case 22: return Array.from({ length: r.pick([5, 50]) }, () => (depth < 2 ? nastyValue(r, raw, depth + 1) : 0));
    case 23: return r.pick(['OCMF|{"RD":[]}|{"SA":"x"}', 'OCMF|', '{"signedMeterData":"x"}', 'SignedData']);
    case 24: return r.pick([2147483647, 2147483648, -2147483649, 4294967296]);
    case 25: return String(r.int(-1, 1e9));
    case 26: return r.pick(["'; drop table meter_readings; --", '$1', '\\', '"', '%s%n', '{{7*7}}', '${x}']);
    case 27: return { value: r.pick(['1e21', 1e21, '\u0000', -1]), signedMeterValue: { signedMeterData: 'x'.repeat(r.int(0, 3000)) } };
    case 28: return new Raw(r.pick(['1e999999', '-1e999999', '1e-999999', '123456789012345678901234567890', '-0', '1E+21', '0.0000000000000000000000001']));
    case 29: return deepArray(r.pick([100, 1000, 10_000]));
    case 30: return deepObject(r.pick([100, 1000, 10_000]));
    case 31: return new Raw('{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}');
    case 32: return new Raw('{"a":1,"a":2,"toString":"x","valueOf":{}}');
    default: return new Raw('"\\u0000\\ud800\\udc00\\uffff"');
  }
}

/** A deep copy with 1–3 mutations: a value replaced by a hostile one, a key removed, or a hostile key added. */
export function mutate(template: unknown, r: Prng, raw: boolean): unknown {
  if (r.chance(0.05)) return nastyValue(r, raw);
  const copy = structuredClone(template) as Record<string, unknown>;
  const n = r.int(1, 3);
  for (let i = 0; i < n; i++) {
    const nodes = containers(copy);
    const node = r.pick(nodes);
    const keys = Object.keys(node);
    const op = r.int(0, 9);
    if (op <= 5 && keys.length) (node as Record<string, unknown>)[r.pick(keys)] = nastyValue(r, raw);
    else if (op <= 7 && keys.length && !Array.isArray(node)) delete (node as Record<string, unknown>)[r.pick(keys)];
    else if (!Array.isArray(node)) Object.defineProperty(node, r.chance(0.5) ? r.pick(PROTO_NAMES) : r.str(r.int(0, 12)), { value: nastyValue(r, raw), enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

function containers(v: unknown, out: object[] = []): object[] {
  if (v && typeof v === 'object' && !(v instanceof Raw)) {
    out.push(v);
    for (const x of Object.values(v)) containers(x, out);
  }
  return out;
}
