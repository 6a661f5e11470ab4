// The rows of the set-based ingest statements (batch.ts, batch-starts.ts) and the SQL they share, the id tags'
// verdicts included.
//
// The batch statements take their rows as one JSON parameter (json_to_recordset) rather than a dozen arrays: the
// driver serialises arrays element by element in JavaScript (quoting every string, formatting every Date), which
// was 7 % of the gateway's CPU in a burst of starts; JSON.stringify is native. Times go as epoch milliseconds
// and are turned back into timestamptz exactly (AT_MS).
import { sql } from 'kysely';
import { verdictOfRow } from '../chargers/id-tokens.ts';
import type { EnergyReading, IdTagVerdict } from './events.ts';
import { ENERGY_REGISTER, REPLAY_ADDS, REPLAY_ADDS_SOMETHING } from './readings.ts';

export const isRegister = (r: EnergyReading) => r.measurand === ENERGY_REGISTER && r.phase === '';

export interface ReadingRecord {
  charger_id: string;
  /** null for a start's readings: its session is created in the same statement (matched by charger) */
  session_id: string | null;
  connector_id: number;
  /** measured_at, epoch ms */
  at: number;
  measurand: string;
  phase: string;
  wh: string;
  context: string | null;
  signed_data: string | null;
  signature_status: string | null;
  anomaly: string | null;
  power_w: number | null;
  register: boolean;
}

export function readingRecord(chargerId: string, connectorId: number, sessionId: string | null, r: EnergyReading, anomaly: string | null): ReadingRecord {
  return {
    charger_id: chargerId,
    session_id: sessionId,
    connector_id: connectorId,
    at: r.measuredAt.getTime(),
    measurand: r.measurand,
    phase: r.phase,
    wh: r.wh.toString(),
    context: r.context,
    signed_data: r.signedData,
    signature_status: r.signatureStatus ?? null,
    anomaly,
    power_w: r.powerW ?? null,
    register: isRegister(r),
  };
}

/** epoch milliseconds (a JSON parameter's times) as timestamptz, exact to the millisecond; null stays null */
export const AT_MS = (ms: ReturnType<typeof sql.ref>) => sql`(timestamptz 'epoch' + ${ms} * interval '1 millisecond')`;

/**
 * `limit n` after a JSON parameter's rows, n being their number: the planner takes json_to_recordset for 100 rows
 * whatever it holds, and for a batch of a few messages that made it hash the whole charging_sessions table instead
 * of probing its primary key a few times (10,000 sessions: 11 ms a statement instead of 0.2). With the limit it
 * expects the true count, as it did for the arrays (test/ocpp/ingest-plans.test.ts). n goes as a parameter, which a
 * statement sent unnamed is planned with, so that a prepared statement's text is the same for every batch size
 * (prepared.ts; a generic plan takes a tenth of the 100 rows).
 */
export const rowCount = (n: number) => sql`limit ${n}`;

/** The CTE `r`: a JSON parameter of ReadingRecord as rows, with measured_at. */
export const readingsCte = (records: ReadingRecord[]) => sql`r as (
      select r.*, ${AT_MS(sql.ref('r.at'))} as measured_at
        from json_to_recordset(${JSON.stringify(records)}::json)
             as r(charger_id uuid, session_id uuid, connector_id int, at bigint, measurand text, phase text, wh bigint,
                  context text, signed_data text, signature_status text, anomaly text, power_w int, register boolean)
       ${rowCount(records.length)})`;

/**
 * How many of the register readings of the CTE `r` (built from `records`) are stored already (a batch writes only
 * when none is). The batch's first and last register times bound the lookup as parameters, so that the planner
 * keeps to the partitions of those months: meter_readings keeps every month, and a join on the CTE's times alone
 * was planned (and locked) over all of them for every batch, pruned only when it ran (three years of history: 41
 * partitions, 4.4 ms of planning a statement instead of 0.7; D74, test/ocpp/ingest-plans.test.ts).
 */
export function storedRegisters(records: ReadingRecord[]) {
  let first = Infinity;
  let last = -Infinity;
  for (const r of records) {
    if (!r.register) continue;
    if (r.at < first) first = r.at;
    if (r.at > last) last = r.at;
  }
  if (first > last) first = last = 0; // no register reading: nothing to count, and no month to plan for
  // a probe per reading (LATERAL … LIMIT 1 is never flattened into a join): its unique index entry, in the month of
  // its time. As a join, the planner without statistics for a partition (a new month, or autovacuum yet to analyse
  // it) read every reading of the batch's time range and compared each with every reading of the batch: 980,352
  // comparisons and 277 ms for a batch of 222 stops over 4,416 readings in the benchmark
  return sql`
      select count(*)::int as n
        from r
       cross join lateral (
         select 1 from meter_readings m
          where m.charger_id = r.charger_id and m.connector_id = r.connector_id and m.measured_at = r.measured_at
            and m.measurand = ${ENERGY_REGISTER} and m.phase = '' and m.wh = r.wh
            and m.measured_at >= ${new Date(first)}::timestamptz and m.measured_at <= ${new Date(last)}::timestamptz
          limit 1) m
       where r.register`;
}

/** The CTE `r`'s readings as meter_readings columns (session_id from `sessionId`). */
export const readingColumns = (sessionId: ReturnType<typeof sql.ref>) =>
  sql`r.charger_id, ${sessionId}, r.connector_id, r.measured_at, r.measurand, r.phase, r.wh, r.context, r.signed_data, r.signature_status, r.anomaly, r.power_w`;

/** A reading sent again keeps the stored one and fills only what it lacked, and one that adds nothing is left as it is
 * (the one-message path's rule, readings.ts REPLAY_ADDS). */
export const KEEP_STORED_READING = sql`on conflict (charger_id, connector_id, measured_at, measurand, phase, wh) do update set
        ${sql.join(Object.entries(REPLAY_ADDS).map(([column, value]) => sql`${sql.ref(column)} = ${value}`))}
      where ${REPLAY_ADDS_SOMETHING}`;

/** A tagged message of a batch: its index, its charger and the id tag whose verdict it needs. */
export interface Tagged {
  i: number;
  charger_id: string;
  tag: string;
}

/** What a verdict is made of (idTagVerdict's rule: verdictOfRow), as a statement returns it in JSON. */
export interface VerdictRow {
  i: number;
  auth_policy: string | null;
  status: IdTagVerdict | null;
  expires_at: string | null;
}

/**
 * The rows the id-tag verdicts of many messages are made of, as one JSON value for the select list of a batch's
 * statement (its writes never depend on a verdict, so the verdicts cost no statement of their own).
 */
export const verdictRows = (tagged: Tagged[]) =>
  tagged.length === 0
    ? sql<VerdictRow[]>`'[]'::json`
    : sql<VerdictRow[]>`coalesce((
      select json_agg(json_build_object('i', v.i, 'auth_policy', c.auth_policy, 'status', t.status, 'expires_at', t.expires_at))
        from json_to_recordset(${JSON.stringify(tagged)}::json) as v(i int, charger_id uuid, tag text)
        left join ocpp_chargers c on c.charger_id = v.charger_id
        left join ocpp_id_tokens t on t.charger_id = v.charger_id and lower(t.id_token) = lower(v.tag)), '[]')`; // case-insensitive, as idTagVerdict

/** The verdicts of verdictRows' rows, by message index (verdictOfRow's rule). */
export function verdictsFrom(rows: VerdictRow[], now: Date): Map<number, IdTagVerdict> {
  const verdicts = new Map<number, IdTagVerdict>();
  for (const r of rows) {
    const row = r.auth_policy === null ? undefined : { auth_policy: r.auth_policy, status: r.status, expires_at: r.expires_at === null ? null : new Date(r.expires_at) };
    verdicts.set(r.i, verdictOfRow(row, now).verdict);
  }
  return verdicts;
}
