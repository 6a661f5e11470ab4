// POST /partner/customers and POST /partner/drafts/import (spec §4.2, C3.1–C3.3): rows in, claimable
// drafts out. Every row that does not become a draft is named once in `rejected` and counted in `skipped`.
// The rolling cap is counted under a per-partner advisory lock inside the insert transaction, so two
// concurrent uploads of one partner cannot pass it; drafts and invites are written with multi-row inserts.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import type { Db } from '../../db/database.ts';
import type { PartnersTable } from '../../db/tables/core.ts';
import type { AddressIgnoredReason, EanStatus } from '../../db/tables/partner.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { candidateCount, lookupDraftEan, type EanLookupResult } from './ean-lookup.ts';
import { loadFacts, openDraftEmails, type RowFacts } from './facts.ts';
import type { RawRow } from './fields.ts';
import { inviteMessage } from './invite-text.ts';
import { operatorOf } from '../../lib/operator.ts';
import { prepareRow, SKIP_REASONS, type Candidate, type SkipReason } from './rows.ts';
import { newClaimToken, claimUrl } from './tokens.ts';
import { hashSecret } from '../../lib/secrets.ts';
import { newUnsubscribeToken, queueMessages, type QueuedMessage } from '../invites/outbox.ts';

/** spec §4.2 / §8: at most this many rows of one request become drafts. */
export const MAX_ROWS_PER_REQUEST = 1000;

export interface UploadResult {
  ok: true;
  added: number;
  batch_id: string;
  created: Array<{ draft_id: string; email: string; external_ref: string | null; claim_url: string; ean_status: EanStatus; ean_candidates: number }>;
  address_ignored: Array<{ email: string; reason: AddressIgnoredReason; row: number }>;
  claim_urls: Array<{ email: string; claim_url: string }>;
  referral_codes: Array<{ email: string; code: string; matched: boolean }>;
  rejected: Array<{ email: string; reason: SkipReason; row: number }>;
  skipped: Record<SkipReason, number>;
  cap: { rolling_days: number; rolling_cap: number; remaining_before: number };
}

export interface UploadRequest {
  partnerId: string;
  endpoint: 'customers' | 'import';
  source: 'api' | 'csv';
  rows: RawRow[];
  /** The 1-based row number each row has in the request (CSV data rows, D210); without it, index + 1. */
  rowNumbers?: number[];
  sendInvite: boolean;
}

/** D210: the row the partner must look at, as the request numbers it. */
const rowNumberOf = (req: UploadRequest, index: number): number => req.rowNumbers?.[index] ?? index + 1;

type Partner = Pick<PartnersTable, 'name'> & { id: string; rolling_days: number; rolling_cap: number };

export async function partnerOf(deps: Deps, partnerId: string): Promise<Partner> {
  const p = await deps.db
    .selectFrom('partners')
    .select(['id', 'name', 'rolling_days', 'rolling_cap'])
    .where('id', '=', partnerId)
    .executeTakeFirst();
  if (!p) throw new DomainError('No partner is linked to this API key');
  return p;
}

interface Rejection {
  index: number;
  email: string;
  reason: SkipReason;
}

/** The per-row checks against stored state and earlier rows of the same request (C3.2). */
function decideRows(rows: Candidate[], facts: RowFacts, rejections: Rejection[]): Candidate[] {
  const seenEmails = new Set<string>();
  const seenRefs = new Map<string, string>();
  const seenEans = new Map<string, string>();
  const seenChargers = new Set<string>();
  const out: Candidate[] = [];
  for (const r of rows) {
    const reject = (reason: SkipReason) => rejections.push({ index: r.index, email: r.email, reason });
    if (facts.suppressed.has(r.emailLower)) { reject('suppressed'); continue; }
    if (facts.users.has(r.emailLower)) { reject('existing_user'); continue; }
    if (facts.openDrafts.has(r.emailLower) || seenEmails.has(r.emailLower)) { reject('already_drafted'); continue; }
    if (r.external_ref) {
      const stored = facts.refs.get(r.external_ref);
      const earlier = seenRefs.get(r.external_ref);
      if ((stored && [...stored].some((e) => e !== r.emailLower)) || (earlier && earlier !== r.emailLower)) { reject('conflict'); continue; }
    }
    if (r.ean) {
      const earlier = seenEans.get(r.ean);
      const drafted = facts.draftEans.get(r.ean);
      const otherDraft = !!drafted && [...drafted].some((e) => e !== r.emailLower);
      if (facts.bookedEans.has(r.ean) || otherDraft || (earlier && earlier !== r.emailLower)) { reject('conflict'); continue; }
    }
    if (r.charger) {
      const brand = r.charger.brand?.toLowerCase();
      if (!brand || !facts.brands.has(brand)) { reject('charger_brand_unsupported'); continue; }
      const c = r.charger.serial ? facts.chargers.get(r.charger.serial.toLowerCase()) : undefined;
      if (!c || (c.brandLower !== null && c.brandLower !== brand)) { reject('charger_not_linked'); continue; }
      if (c.claimed || seenChargers.has(c.id)) { reject('charger_claimed'); continue; }
      r.chargerId = c.id;
      seenChargers.add(c.id);
    }
    seenEmails.add(r.emailLower);
    if (r.external_ref) seenRefs.set(r.external_ref, r.emailLower);
    if (r.ean) seenEans.set(r.ean, r.emailLower);
    out.push(r);
  }
  return out;
}

/** Run async work over items with at most `n` in flight (EAN lookups of source api). */
async function mapLimit<T, R>(items: T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}

function eanResultFor(r: Candidate, source: 'api' | 'csv'): EanLookupResult | null {
  if (r.eanInvalid) return { ean_status: 'invalid', ean_code: null, ean_candidates: [] };
  if (!r.address) {
    return r.ean ? { ean_status: 'resolved', ean_code: r.ean, ean_candidates: [] } : { ean_status: 'not_found', ean_code: null, ean_candidates: [] };
  }
  if (source === 'csv') return { ean_status: 'pending', ean_code: r.ean, ean_candidates: [] };
  return null; // looked up now
}

export async function createDrafts(deps: Deps, req: UploadRequest): Promise<UploadResult> {
  const partner = await partnerOf(deps, req.partnerId);
  const rejections: Rejection[] = [];
  const prepared: Candidate[] = [];
  req.rows.forEach((raw, index) => {
    if (index >= MAX_ROWS_PER_REQUEST) {
      rejections.push({ index, email: raw.email ?? '', reason: 'over_request_limit' });
      return;
    }
    const p = prepareRow(raw, index);
    if (p.ok) prepared.push(p.row);
    else rejections.push({ index, email: p.email, reason: p.reason });
  });

  const facts = await loadFacts(deps.db, partner.id, prepared);
  const candidates = decideRows(prepared, facts, rejections);
  const lookups = await mapLimit(candidates, 4, async (r) => eanResultFor(r, req.source) ?? lookupDraftEan(deps, r.ean, r.address));
  candidates.forEach((r, i) => {
    const l = lookups[i]!;
    if (l.address_ignored) {
      r.addressIgnored = l.address_ignored;
      r.address = null;
    }
  });

  const now = deps.clock();
  let result: Omit<UploadResult, 'rejected' | 'skipped'>;
  try {
    result = await deps.db.transaction().execute((trx) => insertUnderCap(deps, trx, partner, req, candidates, lookups, rejections, now));
  } catch (err) {
    if (isDomainError(err)) throw err;
    deps.logger.error({ err, partnerId: partner.id }, 'draft upload failed');
    throw new DomainError('Failed to create drafts', 'The drafts could not be stored; nothing was added. The request can be retried.');
  }
  rejections.sort((a, b) => a.index - b.index);
  const skipped = Object.fromEntries(SKIP_REASONS.map((k) => [k, 0])) as Record<SkipReason, number>;
  for (const r of rejections) skipped[r.reason]++;
  return { ...result, rejected: rejections.map(({ index, email, reason }) => ({ email, reason, row: rowNumberOf(req, index) })), skipped };
}

async function insertUnderCap(
  deps: Deps,
  trx: Db,
  partner: Partner,
  req: UploadRequest,
  candidates: Candidate[],
  lookups: EanLookupResult[],
  rejections: Rejection[],
  now: Date,
): Promise<Omit<UploadResult, 'rejected' | 'skipped'>> {
  // one upload per partner at a time past this point: the cap and the open-draft check are exact
  await sql`select pg_advisory_xact_lock(hashtext(${'partner-drafts:' + partner.id}))`.execute(trx);
  const open = await openDraftEmails(trx, partner.id, candidates.map((c) => c.emailLower));
  const since = new Date(now.getTime() - partner.rolling_days * 86_400_000);
  const { n } = await trx
    .selectFrom('partner_drafts')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('partner_id', '=', partner.id)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow();
  const remainingBefore = Math.max(0, partner.rolling_cap - Number(n));

  const accepted: Array<{ row: Candidate; lookup: EanLookupResult; token: string }> = [];
  candidates.forEach((row, i) => {
    if (open.has(row.emailLower)) rejections.push({ index: row.index, email: row.email, reason: 'already_drafted' });
    else if (accepted.length >= remainingBefore) rejections.push({ index: row.index, email: row.email, reason: 'over_cap' });
    else accepted.push({ row, lookup: lookups[i]!, token: newClaimToken() });
  });

  const batch = await trx
    .insertInto('partner_batches')
    .values({ partner_id: partner.id, endpoint: req.endpoint, source: req.source, rows_received: req.rows.length, rows_added: 0, created_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();

  const inserted = new Map<number, string>();
  for (let i = 0; i < accepted.length; i += 500) {
    const chunk = accepted.slice(i, i + 500);
    const rows = await trx
      .insertInto('partner_drafts')
      .values(
        chunk.map(({ row, lookup, token }) => ({
          partner_id: partner.id,
          batch_id: batch.id,
          row_index: row.index,
          email: row.email,
          email_lower: row.emailLower,
          name: row.name,
          type: row.type,
          company_name: row.company_name,
          contact_name: row.contact_name,
          kvk: row.kvk,
          btw: row.btw,
          external_ref: row.external_ref,
          referral_code: row.referral_code,
          postal_code: row.address?.postal_code ?? null,
          house_number: row.address?.house_number ?? null,
          house_number_addition: row.address?.house_number_addition ?? null,
          city: row.city,
          ean_code: lookup.ean_code,
          ean_status: lookup.ean_status,
          ean_candidates: JSON.stringify(lookup.ean_candidates),
          address_ignored_reason: row.addressIgnored,
          charger_id: row.chargerId,
          claim_token_hash: hashSecret(token),
          created_at: now,
        })),
      )
      // belt and braces under the lock: a unique index (open e-mail, external_ref, charger) decides
      .onConflict((oc) => oc.doNothing())
      .returning(['id', 'row_index'])
      .execute();
    rows.forEach((r) => inserted.set(r.row_index, r.id));
  }
  const created = accepted.filter((a) => {
    if (inserted.has(a.row.index)) return true;
    rejections.push({ index: a.row.index, email: a.row.email, reason: 'already_drafted' });
    return false;
  });
  await trx.updateTable('partner_batches').set({ rows_added: created.length }).where('id', '=', batch.id).execute();

  const codes = [...new Set(created.map((c) => c.row.referral_code?.toLowerCase()).filter((c): c is string => !!c))];
  const known = new Set<string>();
  if (codes.length) {
    const rs = await trx.selectFrom('referral_codes').select('code_lower').where('code_lower', 'in', codes).execute();
    rs.forEach((r) => known.add(r.code_lower));
  }
  await trx
    .updateTable('partner_drafts')
    .set({ referral_matched: true })
    .where('batch_id', '=', batch.id)
    .where(sql<string>`lower(referral_code)`, 'in', known.size ? [...known] : [''])
    .execute();

  if (req.sendInvite && created.length) {
    const messages: QueuedMessage[] = created.map(({ row, token }) => {
      const unsubscribeToken = newUnsubscribeToken();
      return {
        to: row.email,
        ...inviteMessage(deps, { name: row.name, partnerName: partner.name, claimUrl: claimUrl(deps, token), unsubscribeToken }),
        draftId: inserted.get(row.index)!,
        unsubscribeToken,
      };
    });
    await queueMessages(trx, now, messages, operatorOf(deps.config));
  }

  return {
    ok: true,
    added: created.length,
    batch_id: batch.id,
    created: created.map(({ row, lookup, token }) => ({
      draft_id: inserted.get(row.index)!,
      email: row.email,
      external_ref: row.external_ref,
      claim_url: claimUrl(deps, token),
      ean_status: lookup.ean_status,
      ean_candidates: candidateCount(lookup.ean_status, lookup.ean_candidates),
    })),
    address_ignored: created
      .filter((c) => c.row.addressIgnored)
      .map((c) => ({ email: c.row.email, reason: c.row.addressIgnored!, row: rowNumberOf(req, c.row.index) })),
    claim_urls: req.sendInvite ? [] : created.map(({ row, token }) => ({ email: row.email, claim_url: claimUrl(deps, token) })),
    referral_codes: created
      .filter((c) => c.row.referral_code)
      .map((c) => ({ email: c.row.email, code: c.row.referral_code!, matched: known.has(c.row.referral_code!.toLowerCase()) })),
    cap: { rolling_days: partner.rolling_days, rolling_cap: partner.rolling_cap, remaining_before: remainingBefore },
  };
}
