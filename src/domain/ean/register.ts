// C2.7 / C3.3 EAN register: one interface (check + lookupByAddress; the partner area uses lookupByAddress),
// two implementations, the instance at deps.eanRegister (built in src/main.ts by createEanRegister):
//  - TableEanRegister: the embedded default, rows loaded through POST /admin/ean-register;
//  - HttpEanRegister: an adapter for a real register at EAN_REGISTER_URL (contract in docs/onboarding.md).
// Both answer two questions (where is this EAN, which EANs are at this address) and share one verdict.
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import { normaliseAddition, normaliseHouseNumber, normalisePostalCode } from './ean.ts';

export interface RegisterAddress {
  postal_code: string;
  house_number: string;
  house_number_addition?: string | null | undefined;
}

/** What the register says about an (EAN, address) pair (C2.7). */
export type EanCheckOutcome =
  | { outcome: 'matched' } // EAN listed at that address
  | { outcome: 'mismatched'; reason?: 'ean_listed_elsewhere' | 'other_ean_at_address'; detail?: string } // a clear mismatch
  | { outcome: 'unknown' }; // EAN unknown and no EAN listed at the address (new build)

export interface EanRegister extends RegisterSource {
  check(ean: string, address: RegisterAddress): Promise<EanCheckOutcome>;
  /** EANs the register lists at an address (C3.3: 0 → not_found, 1 → resolved, more → candidates). */
  lookupByAddress(address: RegisterAddress): Promise<string[]>;
  /**
   * The same register reading through `db` (a transaction): the table-backed one must not wait for a connection
   * its caller's transaction holds (PGlite has one). The HTTP one answers itself.
   */
  on(db: Db): EanRegister;
}

/** The register of this process (C2.7): the HTTP adapter when EAN_REGISTER_URL is set, else the table-backed one. */
export function createEanRegister(config: Pick<Config, 'EAN_REGISTER_URL' | 'EAN_REGISTER_TOKEN'>, db: Db): EanRegister {
  return config.EAN_REGISTER_URL ? new HttpEanRegister(config.EAN_REGISTER_URL, config.EAN_REGISTER_TOKEN) : new TableEanRegister(db);
}

export interface RegisterEntry extends RegisterAddress {
  ean_code: string;
}

/** The two questions every register answers; the verdict is computed once, here. */
export interface RegisterSource {
  /** the register's entry for this EAN, or null when the EAN is unknown */
  findByEan(ean: string): Promise<RegisterEntry | null>;
  /** every entry at this postal code and house number (any addition) */
  findByAddress(address: RegisterAddress): Promise<RegisterEntry[]>;
}

const sameAddress = (a: RegisterAddress, b: RegisterAddress): boolean =>
  normalisePostalCode(a.postal_code) === normalisePostalCode(b.postal_code) &&
  normaliseHouseNumber(a.house_number) === normaliseHouseNumber(b.house_number) &&
  normaliseAddition(a.house_number_addition) === normaliseAddition(b.house_number_addition);

/** The detailed verdict (checkEan); EanRegister.check reports it as EanCheckOutcome. */
export type EanVerdict =
  | { outcome: 'matched' }
  | { outcome: 'mismatch'; reason: 'ean_listed_elsewhere' | 'other_ean_at_address'; detail: string }
  | { outcome: 'unknown' };

/** The verdict of C2.7 for an EAN and address, from whatever register answers. */
export async function checkEan(register: RegisterSource, ean: string, address: RegisterAddress): Promise<EanVerdict> {
  const byEan = await register.findByEan(ean);
  if (byEan) {
    if (sameAddress(byEan, address)) return { outcome: 'matched' };
    return {
      outcome: 'mismatch',
      reason: 'ean_listed_elsewhere',
      detail: `The EAN register lists EAN ${ean} at another address.`,
    };
  }
  const atAddress = (await register.findByAddress(address)).filter((e) => sameAddress(e, address));
  if (atAddress.length > 0) {
    return {
      outcome: 'mismatch',
      reason: 'other_ean_at_address',
      detail: `The EAN register lists another EAN at this address, not ${ean}.`,
    };
  }
  return { outcome: 'unknown' };
}

/** check and lookupByAddress on top of a RegisterSource. */
abstract class SourceBackedRegister implements EanRegister, RegisterSource {
  abstract findByEan(ean: string): Promise<RegisterEntry | null>;
  abstract findByAddress(address: RegisterAddress): Promise<RegisterEntry[]>;
  abstract on(db: Db): EanRegister;
  async check(ean: string, address: RegisterAddress): Promise<EanCheckOutcome> {
    const v = await checkEan(this, ean, address);
    return v.outcome === 'mismatch' ? { outcome: 'mismatched', reason: v.reason, detail: v.detail } : v;
  }
  async lookupByAddress(address: RegisterAddress): Promise<string[]> {
    const add = normaliseAddition(address.house_number_addition);
    const all = await this.findByAddress(address);
    // with an addition: the entries with that addition; without one, every entry at the number
    const hits = add ? all.filter((e) => normaliseAddition(e.house_number_addition) === add) : all;
    return [...new Set(hits.map((e) => e.ean_code))];
  }
}

export class TableEanRegister extends SourceBackedRegister {
  readonly name = 'table';
  constructor(private readonly db: Db) {
    super();
  }

  on(db: Db): EanRegister {
    return new TableEanRegister(db);
  }

  async findByEan(ean: string): Promise<RegisterEntry | null> {
    const row = await this.db.selectFrom('ean_register_entries').selectAll().where('ean_code', '=', ean).executeTakeFirst();
    return row ?? null;
  }

  async findByAddress(address: RegisterAddress): Promise<RegisterEntry[]> {
    return this.db
      .selectFrom('ean_register_entries')
      .selectAll()
      .where('postal_code', '=', normalisePostalCode(address.postal_code))
      .where('house_number', '=', normaliseHouseNumber(address.house_number))
      .execute();
  }
}

/** Load entries into the table-backed register (POST /admin/ean-register). Re-loading an EAN replaces it. */
export async function loadRegisterEntries(db: Db, entries: RegisterEntry[]): Promise<number> {
  if (entries.length === 0) return 0;
  const rows = entries.map((e) => ({
    ean_code: e.ean_code.replace(/\s+/g, ''),
    postal_code: normalisePostalCode(e.postal_code),
    house_number: normaliseHouseNumber(e.house_number),
    house_number_addition: normaliseAddition(e.house_number_addition),
  }));
  // one row per EAN (ON CONFLICT cannot touch a row twice in one statement); chunks stay far below
  // PostgreSQL's 65,535 bind parameters
  const unique = [...new Map(rows.map((r) => [r.ean_code, r])).values()];
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < unique.length; i += 2000) {
      await trx
        .insertInto('ean_register_entries')
        .values(unique.slice(i, i + 2000))
        .onConflict((oc) =>
          oc.column('ean_code').doUpdateSet((eb) => ({
            postal_code: eb.ref('excluded.postal_code'),
            house_number: eb.ref('excluded.house_number'),
            house_number_addition: eb.ref('excluded.house_number_addition'),
            loaded_at: eb.fn('now'),
          })),
        )
        .execute();
    }
  });
  return unique.length;
}

export class EanRegisterUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EanRegisterUnavailable';
  }
}

/**
 * HTTP adapter. Contract (docs/onboarding.md):
 *   GET {base}/connections/{ean}                          → 200 RegisterEntry | 404
 *   GET {base}/connections?postal_code=…&house_number=…   → 200 { connections: RegisterEntry[] }
 * with `Authorization: Bearer <EAN_REGISTER_TOKEN>` when a token is configured.
 */
export class HttpEanRegister extends SourceBackedRegister {
  readonly name = 'http';
  constructor(
    private readonly baseUrl: string,
    private readonly token?: string | undefined,
    private readonly timeoutMs = 10_000,
  ) {
    super();
  }

  on(): EanRegister {
    return this;
  }

  private async get(pathAndQuery: string): Promise<{ status: number; body: unknown }> {
    const url = this.baseUrl.replace(/\/+$/, '') + pathAndQuery;
    let res: Response;
    try {
      res = await fetch(url, {
        headers: { accept: 'application/json', ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new EanRegisterUnavailable(`EAN register unreachable: ${(err as Error).message}`);
    }
    if (res.status === 404) return { status: 404, body: null };
    if (!res.ok) throw new EanRegisterUnavailable(`EAN register answered HTTP ${res.status}`);
    return { status: res.status, body: await res.json() };
  }

  async findByEan(ean: string): Promise<RegisterEntry | null> {
    const { status, body } = await this.get(`/connections/${encodeURIComponent(ean)}`);
    if (status === 404) return null;
    return toEntry(body);
  }

  async findByAddress(address: RegisterAddress): Promise<RegisterEntry[]> {
    const q = new URLSearchParams({ postal_code: normalisePostalCode(address.postal_code), house_number: address.house_number.trim() });
    const { status, body } = await this.get(`/connections?${q.toString()}`);
    if (status === 404) return [];
    const list = (body as { connections?: unknown })?.connections;
    if (!Array.isArray(list)) throw new EanRegisterUnavailable('EAN register answered without a connections array');
    return list.map(toEntry);
  }
}

function toEntry(v: unknown): RegisterEntry {
  const o = v as Record<string, unknown> | null;
  if (!o || typeof o.ean_code !== 'string' || typeof o.postal_code !== 'string' || o.house_number === undefined) {
    throw new EanRegisterUnavailable('EAN register answered an entry without ean_code, postal_code and house_number');
  }
  return {
    ean_code: o.ean_code,
    postal_code: o.postal_code,
    house_number: String(o.house_number),
    house_number_addition: typeof o.house_number_addition === 'string' ? o.house_number_addition : null,
  };
}
