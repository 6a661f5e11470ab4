// C4.6 sessions: gateway-assigned 1.6 ids, 2.0.1 charger ids, recovery of unknown/-1/missing ids and reboots.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { ChargingSessionsTable } from '../../db/tables/core.ts';
import type { RawBuilder, Selectable } from 'kysely';
import type { EnergyReading, TransactionRef } from './events.ts';
import { ENERGY_REGISTER } from './readings.ts';

export type SessionRow = Selectable<ChargingSessionsTable>;

/** The next gateway transaction id for OCPP 1.6 (unique across the whole service). */
export async function nextTransactionId(trx: Db): Promise<string> {
  const r = await sql<{ id: number }>`select nextval('ocpp16_transaction_id_seq')::integer as id`.execute(trx);
  return String(r.rows[0]!.id);
}

/**
 * The latest session of the charger with this transaction id (a reused id has several: D99), locked (FOR UPDATE):
 * the caller goes on to update the session's energy from this row (readings.ts).
 */
export async function findByTransactionId(trx: Db, chargerId: string, transactionId: string): Promise<SessionRow | undefined> {
  return trx
    .selectFrom('charging_sessions')
    .selectAll()
    .where('charger_id', '=', chargerId)
    .where('transaction_id', '=', transactionId)
    .orderBy('transaction_generation', 'desc')
    .limit(1)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * D178: the generation of a (possibly reused, D99) transaction id that a message taken at `at` belongs to, locked
 * (FOR UPDATE): the one whose span holds `at`. A time in the gap after a generation ended for good (not provisionally)
 * and before the next one started belongs to the next one (its Started came late); a time before the first
 * generation's start to the first; a time after the latest generation's end to the latest (the caller's
 * reusesTransactionId then opens the next generation). Before, every message found the latest generation, so a resent
 * old Ended ended the running transaction 29 h before it started.
 */
export async function findGeneration(trx: Db, chargerId: string, transactionId: string, at: Date): Promise<SessionRow | undefined> {
  // at most three probes of the id's index, each one row, whatever the number of generations (a charger that names
  // every transaction "1" has one per transaction): the latest started at or before `at`, else the first; and, when
  // that one ended for good before `at`, the one after it
  const of = () => trx.selectFrom('charging_sessions').selectAll().where('charger_id', '=', chargerId).where('transaction_id', '=', transactionId);
  const g =
    (await of().where('started_at', '<=', at).orderBy('transaction_generation', 'desc').limit(1).forUpdate().executeTakeFirst()) ??
    (await of().orderBy('transaction_generation').limit(1).forUpdate().executeTakeFirst());
  if (!g || !(g.status === 'completed' && !g.end_provisional && g.ended_at !== null && at.getTime() > g.ended_at.getTime())) return g;
  return (await of().where('transaction_generation', '>', g.transaction_generation).orderBy('transaction_generation').limit(1).forUpdate().executeTakeFirst()) ?? g;
}

/**
 * D99: a message for a charger-named transaction (2.0.1) whose session ended for good (not provisionally) before the
 * message's earliest time is a new transaction under a reused id, not more of the old one. A replay of the old
 * session's messages lies within it and is not.
 */
export function reusesTransactionId(s: Pick<SessionRow, 'status' | 'end_provisional' | 'ended_at'>, earliest: Date): boolean {
  return s.status === 'completed' && !s.end_provisional && s.ended_at !== null && earliest.getTime() > s.ended_at.getTime();
}

/** C4.6: a replayed 1.6 StartTransaction (same connector, id tag, start time and meterStart) is the same session. */
export async function findReplayedStart(
  trx: Db,
  chargerId: string,
  s: { connectorId: number; idTag: string | null; startedAt: Date; meterStartWh: bigint | null },
): Promise<SessionRow | undefined> {
  return trx
    .selectFrom('charging_sessions')
    .selectAll()
    .where('charger_id', '=', chargerId)
    .where('connector_id', '=', s.connectorId)
    .where('started_at', '=', s.startedAt)
    .where(sql<boolean>`id_tag is not distinct from ${s.idTag}`)
    .where(sql<boolean>`meter_start_wh is not distinct from ${s.meterStartWh === null ? null : s.meterStartWh.toString()}::bigint`)
    .executeTakeFirst();
}

/**
 * C4.6: a session left open by a charger that rebooted (or that starts a new transaction on the same connector)
 * is closed provisionally at its last reading; a later Stop/Ended replaces that end.
 */
/** How long after the operator's TriggerMessage a 1.6 BootNotification counts as the one it asked for (D134). */
export const TRIGGERED_BOOT_SECONDS = 120;

/**
 * SQL: whether the BootNotification of `chargerId` with `reason` is a reboot (C4.6: its running sessions end
 * provisionally). Not when the charger says it was triggered (2.0.1 `Triggered`), nor, for a 1.6 charger (no reason),
 * when a TriggerMessage for a BootNotification went to it in the last TRIGGERED_BOOT_SECONDS (D134).
 */
export function isRebootSql(chargerId: RawBuilder<unknown>, reason: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`(${reason} is distinct from 'Triggered' and (${reason} is not null or not exists (
      select 1 from ocpp_commands c
       where c.charger_id = ${chargerId} and c.action = 'TriggerMessage' and c.payload->>'requestedMessage' = 'BootNotification'
         and c.created_at > now() - make_interval(secs => ${TRIGGERED_BOOT_SECONDS}))))`;
}

export async function closeOpenSessionsProvisionally(
  trx: Db,
  chargerId: string,
  opts: { connectorId?: number; before?: Date } = {},
): Promise<number> {
  let q = trx
    .updateTable('charging_sessions')
    .set({
      status: 'completed',
      end_provisional: true,
      ended_at: sql`coalesce(last_reading_at, started_at)`,
      meter_stop_wh: sql`last_meter_wh`,
      updated_at: sql`now()`,
    })
    .where('charger_id', '=', chargerId)
    .where('status', '=', 'active');
  if (opts.connectorId !== undefined) q = q.where('connector_id', '=', opts.connectorId);
  if (opts.before) q = q.where('started_at', '<', opts.before);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export async function insertSession(
  trx: Db,
  s: { chargerId: string; connectorId: number; transactionId: string; idTag: string | null; startedAt: Date; meterStartWh: bigint | null; generation?: number },
): Promise<SessionRow> {
  return trx
    .insertInto('charging_sessions')
    .values({
      charger_id: s.chargerId,
      connector_id: s.connectorId,
      transaction_id: s.transactionId,
      transaction_generation: s.generation ?? 0,
      id_tag: s.idTag,
      started_at: s.startedAt,
      meter_start_wh: s.meterStartWh === null ? null : s.meterStartWh.toString(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * C4.6: a reading without a transaction belongs to a session of its connector that runs at its time, one started at
 * or before it and not ended before it. The one rule, here for rows read (sessionsAt) and as SQL for a statement that
 * checks many readings at once (batch-idle.ts): `s` a charging_sessions row, `at` the reading's time.
 */
export const runsAt = (s: { started_at: Date; ended_at: Date | null }, at: Date) => s.started_at <= at && (s.ended_at === null || s.ended_at >= at);
export const RUNS_AT = (s: string, at: RawBuilder<unknown>) =>
  sql<boolean>`${sql.ref(`${s}.started_at`)} <= ${at} and (${sql.ref(`${s}.ended_at`)} is null or ${sql.ref(`${s}.ended_at`)} >= ${at})`;

/**
 * The session each reading time on `connectorId` belongs to, with one query: the latest session that runs at it
 * (runsAt). The candidates are every session that overlaps the readings' span, so none
 * that could own a reading is missed.
 */
export async function sessionsAt(trx: Db, chargerId: string, connectorId: number, times: Date[]): Promise<Array<SessionRow | undefined>> {
  if (times.length === 0) return [];
  const ms = times.map((t) => t.getTime());
  const first = new Date(Math.min(...ms));
  const last = new Date(Math.max(...ms));
  const candidates = await trx
    .selectFrom('charging_sessions')
    .selectAll()
    .where('charger_id', '=', chargerId)
    .where('connector_id', '=', connectorId)
    .where('started_at', '<=', last)
    .where((eb) => eb.or([eb('ended_at', 'is', null), eb('ended_at', '>=', first)]))
    .orderBy('started_at', 'desc')
    .execute();
  return times.map((at) => candidates.find((s) => runsAt(s, at)));
}

/**
 * C4.6: the session a StopTransaction names. A known id is looked up; an unknown or -1 id is matched by
 * connector (when known) and time: the one open session that started before the stop. Undefined = quarantine.
 */
export async function sessionForStop(
  trx: Db,
  chargerId: string,
  ref: TransactionRef,
  connectorId: number | null,
  endedAt: Date,
): Promise<SessionRow | undefined> {
  if (ref.kind !== 'unknown') {
    // D178: a charger-named id may have been reused: the generation whose span holds the stop's time
    const known = ref.kind === 'charger' ? await findGeneration(trx, chargerId, ref.transactionId, endedAt) : await findByTransactionId(trx, chargerId, ref.transactionId);
    if (known || ref.kind === 'charger') return known;
    // D262: the id we gave a start that is in the quarantine: its stop is no other session's (kept beside its start)
    if (await quarantinedStart(trx, chargerId, ref.transactionId)) return undefined;
    // an id this charger never got from us is treated like -1: matched by connector and time
  }
  let q = trx
    .selectFrom('charging_sessions')
    .selectAll()
    .where('charger_id', '=', chargerId)
    .where('started_at', '<=', endedAt)
    .where((eb) => eb.or([eb('status', '=', 'active'), eb('end_provisional', '=', true)]));
  if (connectorId !== null) q = q.where('connector_id', '=', connectorId);
  const candidates = await q.orderBy('started_at', 'desc').limit(3).execute();
  const open = candidates.filter((c) => c.status === 'active');
  if (open.length === 1) return open[0];
  if (open.length === 0 && candidates.length === 1) return candidates[0];
  return undefined;
}

export async function endSession(
  trx: Db,
  sessionId: string,
  e: { endedAt: Date; meterStopWh: bigint | null; reason: string | null; idTag: string | null },
): Promise<void> {
  await trx
    .updateTable('charging_sessions')
    .set({
      status: 'completed',
      end_provisional: false,
      ended_at: e.endedAt,
      meter_stop_wh: e.meterStopWh === null ? null : e.meterStopWh.toString(),
      stop_reason: e.reason,
      id_tag: sql`coalesce(id_tag, ${e.idTag})`,
      updated_at: sql`now()`,
    })
    .where('id', '=', sessionId)
    .execute();
}

/** The meterStart/meterStop values of a transaction message as register readings. */
export function registerReading(at: Date, wh: bigint | null, context: string): EnergyReading[] {
  return wh === null
    ? []
    : [{ measuredAt: at, measurand: ENERGY_REGISTER, phase: '', wh, context, signedData: null }];
}

/**
 * D262: whether this charger got `transactionId` in the acknowledgement of a 1.6 StartTransaction that is kept in the
 * quarantine and was not applied since (D255: the charger charges under it). Its MeterValues and its stop belong to
 * that transaction: placed by connector and time they would land in another session, or outside any.
 */
export async function quarantinedStart(trx: Db, chargerId: string, transactionId: string): Promise<boolean> {
  const row = await trx
    .selectFrom('ocpp_quarantine')
    .select('id')
    .where('charger_id', '=', chargerId)
    .where('action', '=', 'StartTransaction')
    .where(sql<string>`ack->>'transactionId'`, '=', transactionId)
    .where((eb) => eb.or([eb('replay_result', 'is', null), eb('replay_result', '!=', 'applied')]))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** A fresh 1.6 transaction id outside any session (the acknowledgement of a quarantined StartTransaction). */
export async function allocateTransactionId(db: Db): Promise<string> {
  return nextTransactionId(db);
}

/**
 * A provisionally closed session that still receives readings under its own transaction id, taken after the
 * boot that closed it, was not over (a charger that sends BootNotification on every reconnect): it is reopened.
 */
export async function reopenIfStillRunning(trx: Db, session: SessionRow, readings: EnergyReading[]): Promise<void> {
  if (!session.end_provisional || session.status !== 'completed' || !session.ended_at) return;
  // only readings taken after the boot that closed it show it went on; offline-queue readings from before do not
  const st = await trx.selectFrom('ocpp_chargers').select('boot_at').where('charger_id', '=', session.charger_id).executeTakeFirst();
  const after = Math.max(session.ended_at.getTime(), st?.boot_at?.getTime() ?? 0);
  if (!readings.some((r) => r.measuredAt.getTime() > after)) return;
  await trx
    .updateTable('charging_sessions')
    .set({ status: 'active', ended_at: null, end_provisional: false, meter_stop_wh: null, updated_at: sql`now()` })
    .where('id', '=', session.id)
    .execute();
  // D208: what its connector reported while it stood closed (stored without a session: none was running) is its own;
  // the readings are after its last one, so the caller's energy update folds them in with the new ones
  const until = new Date(Math.max(...readings.map((r) => r.measuredAt.getTime())));
  await trx
    .updateTable('meter_readings')
    .set({ session_id: session.id })
    .where('charger_id', '=', session.charger_id)
    .where('connector_id', '=', session.connector_id)
    .where('session_id', 'is', null)
    .where('measured_at', '>', session.ended_at)
    .where('measured_at', '<=', until)
    .execute();
}
