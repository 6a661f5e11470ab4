// The domain side of the OCPP gateway: one function per ChargerEvent kind, no OCPP version in sight.
// Every transaction event runs in one database transaction; the OCPP edge serialises a charger's messages.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Deps } from '../../deps.ts';
import type { SessionState } from './batch.ts';
import { resolveCatalogModel } from '../catalog/resolve.ts';
import { idTagVerdict } from '../chargers/id-tokens.ts';
import { ensureOcppCharger } from '../chargers/ocpp-charger.ts';
import { type AsidePart, type ChargerEvent, type EnergyReading, type EventOutcome, type IdTagVerdict, namedTransactionOf } from './events.ts';
import { recordConnectorStatus } from './live-state.ts';
import { ENERGY_REGISTER, isRoundingOf, maxPowerW, storeReadings } from './readings.ts';
import { recomputeSession, updateSessionEnergy } from './session-energy.ts';
import { holdInvalidSignatures } from './review.ts';
import { placeSignedValues } from './signed-values.ts';
import {
  closeOpenSessionsProvisionally,
  isRebootSql,
  endSession,
  findByTransactionId,
  findGeneration,
  findReplayedStart,
  insertSession,
  nextTransactionId,
  registerReading,
  reopenIfStillRunning,
  sessionsAt,
  quarantinedStart,
  sessionForStop,
  reusesTransactionId,
  type SessionRow,
} from './sessions.ts';

export interface EventContext {
  chargerId: string;
  /**
   * Held by the OCPP edge for the socket's lifetime: the charger's maximum power (derived from its catalog model,
   * which changes only on BootNotification, where it is dropped and read again).
   */
  cache?: SocketCache;
}

/**
 * What a socket remembers between its messages; the database stays the record (each use is checked against it).
 * Both fields always exist (undefined = not known): a socket forgets by setting undefined, never by `delete`, which
 * would turn each socket's object into a slower dictionary-mode object on every boot.
 */
export interface SocketCache {
  maxPowerW: number | undefined;
  /** its session's row as the last set-based write left it (batch.ts applyRemembered) */
  session: SessionState | undefined;
}

export const newSocketCache = (): SocketCache => ({ maxPowerW: undefined, session: undefined });

async function chargerMaxW(deps: Deps, ctx: EventContext): Promise<number> {
  if (ctx.cache?.maxPowerW !== undefined) return ctx.cache.maxPowerW;
  const w = await maxPowerW(deps.db, ctx.chargerId, deps.config.OCPP_MAX_POWER_W);
  if (ctx.cache) ctx.cache.maxPowerW = w;
  return w;
}

/** Thrown when a transaction message cannot be placed: the edge acknowledges it and quarantines it. */
export class UnplaceableMessage extends Error {}

/** D262: a message of a transaction whose StartTransaction is in the quarantine (replay the start first, then it). */
const startQuarantined = (transactionId: string) =>
  new UnplaceableMessage(`its StartTransaction (transaction id ${transactionId}) is in the quarantine: replay the start first, then this message`);

export async function handleChargerEvent(deps: Deps, ctx: EventContext, ev: ChargerEvent): Promise<EventOutcome> {
  switch (ev.kind) {
    case 'boot':
      if (ctx.cache) {
        ctx.cache.maxPowerW = undefined;
        ctx.cache.session = undefined;
      }
      return boot(deps, ctx.chargerId, ev);
    case 'heartbeat':
      return { kind: 'heartbeat', currentTime: deps.clock() };
    case 'status':
      await recordConnectorStatus(deps, ctx.chargerId, ev.connectorId, ev.status);
      return { kind: 'ack' };
    case 'authorize': {
      const v = await idTagVerdict(deps, ctx.chargerId, ev.idTag);
      return { kind: 'authorize', verdict: v.verdict, expiresAt: v.expiresAt };
    }
    case 'transaction_started':
      return started(deps, ctx, ev);
    case 'transaction_updated':
      return updated(deps, ctx, ev);
    case 'transaction_ended':
      return ended(deps, ctx, ev);
    case 'meter_values':
      return { kind: 'ack', aside: await meterValues(deps, ctx, ev) };
    case 'notification':
      return { kind: 'ack' };
  }
}

async function boot(deps: Deps, chargerId: string, ev: Extract<ChargerEvent, { kind: 'boot' }>): Promise<EventOutcome> {
  // C4.3: the same resolver as GET /v1/catalog/chargers/resolve; an unknown model is accepted and non-MID.
  const res = await resolveCatalogModel(deps.db, ev.vendor, ev.model);
  const now = deps.clock();
  return deps.db.transaction().execute(async (trx) => {
    await ensureOcppCharger(trx, chargerId);
    await trx
      .updateTable('chargers')
      .set({
        ocpp_vendor: ev.vendor,
        ocpp_model: ev.model,
        catalog_model_id: res.resolved ? res.model.catalog_charger_id : null,
        mid_certified: res.resolved ? res.model.mid_meter : false,
        updated_at: sql`now()`,
      })
      .where('id', '=', chargerId)
      .execute();
    const st = await trx.selectFrom('ocpp_chargers').select('registration_status').where('charger_id', '=', chargerId).executeTakeFirstOrThrow();
    await trx
      .updateTable('ocpp_chargers')
      .set({
        serial_number: ev.serial,
        firmware_version: ev.firmware,
        boot_reason: ev.reason,
        boot_at: now,
        // C4.2: calls to the charger are allowed once its BootNotification is answered (not when Rejected)
        boot_answered_at: st.registration_status === 'Rejected' ? null : now,
        updated_at: sql`now()`,
      })
      .where('charger_id', '=', chargerId)
      .execute();
    // C4.6: a session left open by a charger that rebooted is closed provisionally at its last reading; a boot the
    // operator triggered is no reboot (D134)
    const reboot = await sql<{ yes: boolean }>`select ${isRebootSql(sql`${chargerId}::uuid`, sql`${ev.reason}::text`)} as yes`.execute(trx);
    if (reboot.rows[0]!.yes) await closeOpenSessionsProvisionally(trx, chargerId);
    return { kind: 'boot', status: st.registration_status, intervalSeconds: deps.config.HEARTBEAT_INTERVAL_SECONDS, currentTime: now };
  });
}

async function verdictOf(deps: Deps, chargerId: string, idTag: string | null): Promise<IdTagVerdict | null> {
  return idTag === null ? null : (await idTagVerdict(deps, chargerId, idTag)).verdict;
}

async function started(deps: Deps, ctx: EventContext, ev: Extract<ChargerEvent, { kind: 'transaction_started' }>): Promise<EventOutcome> {
  const { chargerId } = ctx;
  // C4.4: the transaction is recorded whatever the verdict (an invalid tag still gets a transaction id)
  const verdict = await verdictOf(deps, chargerId, ev.idTag);
  const maxW = await chargerMaxW(deps, ctx);
  return deps.db.transaction().execute(async (trx) => {
    const earliest = earliestOf(ev.startedAt, ev.readings);
    let session =
      ev.chargerTransactionId === null
        ? await findReplayedStart(trx, chargerId, ev)
        : await findGeneration(trx, chargerId, ev.chargerTransactionId, earliest);
    // D99: an id the charger reused for a new transaction names a new session, the next generation of that id
    const reused = session !== undefined && ev.chargerTransactionId !== null && reusesTransactionId(session, earliest);
    let late = false;
    if (session && !reused) late = await lateStart(trx, session, ev);
    else {
      await closeOpenSessionsProvisionally(trx, chargerId, { connectorId: ev.connectorId, before: ev.startedAt });
      const transactionId = ev.chargerTransactionId ?? (await nextTransactionId(trx));
      const generation = reused ? session!.transaction_generation + 1 : 0;
      session = await insertSession(trx, { chargerId, connectorId: ev.connectorId, transactionId, idTag: ev.idTag, startedAt: ev.startedAt, meterStartWh: ev.meterStartWh, generation });
    }
    const readings = [...registerReading(ev.startedAt, ev.meterStartWh, 'Transaction.Begin'), ...ev.readings];
    const written = await storeReadings(trx, chargerId, session.connector_id, session.id, readings, deps.clock());
    if ((await keepStartPoint(trx, session, ev, readings)) || late) await recomputeSession(trx, session.id, maxW);
    // a replayed start whose readings are stored as sent changes nothing the session's energy is made of
    else if (written) await updateSessionEnergy(trx, session.id, maxW, readings);
    const aside = await placeSignedValues(trx, { sessionId: session.id }, ev.signed);
    await holdInvalidSignatures(trx, chargerId, ev.signed, maxW);
    return { kind: 'transaction_started', transactionId: session.transaction_id, verdict, aside };
  });
}

/**
 * D179: a Started for a session that exists already (opened by an Updated or Ended that came first from the charger's
 * offline queue, whose Started arrives late) is its start: started_at moves earlier (never later), meter_start_wh
 * becomes the start's own register value (none sent: the session's first reading, set by the recompute), and an
 * id token fills one the session lacks. Everything else is kept, and the energy stays the fold's over its readings.
 * Whether the start moved (the caller recomputes the session).
 */
async function lateStart(trx: Db, session: SessionRow, ev: Extract<ChargerEvent, { kind: 'transaction_started' }>): Promise<boolean> {
  if (ev.idTag !== null && session.id_tag === null) {
    await trx.updateTable('charging_sessions').set({ id_tag: ev.idTag, updated_at: sql`now()` }).where('id', '=', session.id).where('id_tag', 'is', null).execute();
    session.id_tag = ev.idTag;
  }
  if (ev.startedAt.getTime() >= session.started_at.getTime()) return false;
  const at = ev.startedAt.getTime();
  const own = ev.meterStartWh ?? ev.readings.find((r) => r.measurand === ENERGY_REGISTER && r.phase === '' && r.measuredAt.getTime() === at)?.wh ?? null;
  await trx
    .updateTable('charging_sessions')
    .set({ started_at: ev.startedAt, meter_start_wh: own === null ? null : own.toString(), updated_at: sql`now()` })
    .where('id', '=', session.id)
    .execute();
  session.started_at = ev.startedAt;
  session.meter_start_wh = own === null ? null : own.toString();
  return true;
}

/**
 * D96: a register reading at a session's start (or stop) time that is its meterStart (meterStop) rounded to a power
 * of ten of Wh: the same reading written coarser (kWh with two decimals beside Wh), which stored beside it would make
 * a step of a few Wh in no time, held as implausible or backwards.
 */
function isCoarserCopy(s: Pick<SessionRow, 'started_at' | 'meter_start_wh' | 'ended_at' | 'meter_stop_wh'>, r: EnergyReading): boolean {
  if (r.measurand !== ENERGY_REGISTER || r.phase !== '') return false;
  const t = r.measuredAt.getTime();
  if (s.meter_start_wh !== null && t === s.started_at.getTime() && isRoundingOf(r.wh, BigInt(s.meter_start_wh))) return true;
  return s.meter_stop_wh !== null && s.ended_at !== null && t === s.ended_at.getTime() && isRoundingOf(r.wh, BigInt(s.meter_stop_wh));
}

/** The earliest of a message's time and its readings' times. */
const earliestOf = (at: Date, readings: EnergyReading[]): Date => readings.reduce<Date>((m, r) => (r.measuredAt < m ? r.measuredAt : m), at);

/**
 * A start at the instant and register value of the stop before it on the connector finds its reading stored as that
 * session's (the replay key has no session): the new session keeps its start value on its own row (migrations/0064),
 * or it would count nothing up to its next reading. Whether it did so now (the caller recomputes the session).
 */
async function keepStartPoint(trx: Db, session: SessionRow, ev: Extract<ChargerEvent, { kind: 'transaction_started' }>, readings: EnergyReading[]): Promise<boolean> {
  if (session.start_point_wh !== null) return false;
  const at = ev.startedAt.getTime();
  const value = readings.find((r) => r.measurand === ENERGY_REGISTER && r.phase === '' && r.measuredAt.getTime() === at)?.wh;
  if (value === undefined) return false;
  const stored = await trx
    .selectFrom('meter_readings')
    .select('session_id')
    .where('charger_id', '=', session.charger_id)
    .where('connector_id', '=', session.connector_id)
    .where('measured_at', '=', ev.startedAt)
    .where('measurand', '=', ENERGY_REGISTER)
    .where('phase', '=', '')
    .where('wh', '=', value.toString())
    .executeTakeFirst();
  if (!stored || stored.session_id === null || stored.session_id === session.id) return false;
  await trx.updateTable('charging_sessions').set({ start_point_wh: value.toString() }).where('id', '=', session.id).execute();
  return true;
}

async function updated(deps: Deps, ctx: EventContext, ev: Extract<ChargerEvent, { kind: 'transaction_updated' }>): Promise<EventOutcome> {
  const { chargerId } = ctx;
  const verdict = await verdictOf(deps, chargerId, ev.idTag);
  const maxW = await chargerMaxW(deps, ctx);
  const aside = await deps.db.transaction().execute(async (trx) => {
    const session = await sessionOrCreate(trx, chargerId, ev.chargerTransactionId, ev.connectorId, ev.idTag, ev.at, ev.readings);
    // 2.0.1 "plug in, then authorize": the token comes with an Updated (triggerReason Authorized) after a Started
    // that had none; the session keeps the first token it learns, as a stop's token does (endSession)
    if (ev.idTag !== null && session.id_tag === null) {
      await trx.updateTable('charging_sessions').set({ id_tag: ev.idTag }).where('id', '=', session.id).where('id_tag', 'is', null).execute();
    }
    await reopenIfStillRunning(trx, session, ev.readings);
    // D181: a resent Updated whose readings are stored as sent writes nothing (its session keeps its row version)
    if (await storeReadings(trx, chargerId, session.connector_id, session.id, ev.readings, deps.clock())) await updateSessionEnergy(trx, session.id, maxW, ev.readings, session);
    const placed = await placeSignedValues(trx, { sessionId: session.id }, ev.signed);
    await holdInvalidSignatures(trx, chargerId, ev.signed, maxW);
    return placed;
  });
  return { kind: 'transaction', verdict, aside };
}

/** 2.0.1: an Updated/Ended for a transaction whose Started never arrived opens the session from what it carries. */
async function sessionOrCreate(
  trx: Db,
  chargerId: string,
  transactionId: string,
  connectorId: number,
  idTag: string | null,
  at: Date,
  readings: EnergyReading[],
) {
  const first = earliestOf(at, readings);
  // D178: the generation whose span holds the message (a replay of an older one finds it)
  const found = await findGeneration(trx, chargerId, transactionId, first);
  if (found && !reusesTransactionId(found, first)) return found;
  // D99: under an id the charger reused, a transaction whose Started never arrived is a new generation too
  return insertSession(trx, { chargerId, connectorId, transactionId, idTag, startedAt: first, meterStartWh: null, generation: found ? found.transaction_generation + 1 : 0 });
}

async function ended(deps: Deps, ctx: EventContext, ev: Extract<ChargerEvent, { kind: 'transaction_ended' }>): Promise<EventOutcome> {
  const { chargerId } = ctx;
  const verdict = await verdictOf(deps, chargerId, ev.idTag);
  const maxW = await chargerMaxW(deps, ctx);
  const aside = await deps.db.transaction().execute(async (trx) => {
    let session = await sessionForStop(trx, chargerId, ev.ref, ev.connectorId, ev.endedAt);
    // D99: an Ended under an id the charger reused, whose Started never arrived: sessionOrCreate opens its session
    if (session && ev.ref.kind === 'charger' && reusesTransactionId(session, earliestOf(ev.endedAt, ev.readings))) session = undefined;
    if (!session && ev.ref.kind === 'charger') {
      session = await sessionOrCreate(trx, chargerId, ev.ref.transactionId, ev.connectorId ?? 1, ev.idTag, ev.endedAt, ev.readings);
    }
    if (!session) {
      if (ev.ref.kind === 'gateway' && (await quarantinedStart(trx, chargerId, ev.ref.transactionId))) throw startQuarantined(ev.ref.transactionId);
      const sent = ev.ref.kind === 'unknown' ? ev.ref.sent : ev.ref.transactionId;
      throw new UnplaceableMessage(`no session matches transaction id ${sent} by id, connector and time`);
    }
    // D178: a session never ends before it started
    if (ev.endedAt.getTime() < session.started_at.getTime()) {
      throw new UnplaceableMessage(`the stop at ${ev.endedAt.toISOString()} is before its session's start ${session.started_at.toISOString()}`);
    }
    // D181: a resent stop that says what is stored (same end, reason and stop value) and adds no reading writes nothing
    const same = endsAsStored(session, ev);
    if (!same) await endSession(trx, session.id, ev);
    // the start's register in transactionData written coarser than meterStart is meterStart itself (D96)
    const readings = [...ev.readings.filter((r) => !isCoarserCopy(session, r)), ...registerReading(ev.endedAt, ev.meterStopWh, 'Transaction.End')];
    const written = await storeReadings(trx, chargerId, session.connector_id, session.id, readings, deps.clock());
    if (written) {
      if (same) await endSession(trx, session.id, ev);
      await updateSessionEnergy(trx, session.id, maxW, readings);
    }
    // 2.0.1 Ended carries no meterStop: the session's last register reading is its stop value
    if (!same || written) await trx.updateTable('charging_sessions').set({ meter_stop_wh: sql`coalesce(meter_stop_wh, last_meter_wh)` }).where('id', '=', session.id).execute();
    // C4.5: a 1.6 StopTransaction whose transactionData holds only signed data: it signs the meterStop reading
    const placed = await placeSignedValues(trx, { sessionId: session.id }, ev.signed);
    await holdInvalidSignatures(trx, chargerId, ev.signed, maxW);
    return placed;
  });
  return { kind: 'transaction', verdict, aside };
}

/** D181: whether a stop says what its session's row holds already (a resent Ended/StopTransaction). */
function endsAsStored(s: SessionRow, ev: Extract<ChargerEvent, { kind: 'transaction_ended' }>): boolean {
  return (
    s.status === 'completed' &&
    !s.end_provisional &&
    s.ended_at !== null &&
    s.ended_at.getTime() === ev.endedAt.getTime() &&
    (s.stop_reason ?? null) === ev.reason &&
    (ev.meterStopWh === null || s.meter_stop_wh === ev.meterStopWh.toString()) &&
    (ev.idTag === null || s.id_tag !== null)
  );
}

async function meterValues(deps: Deps, ctx: EventContext, ev: Extract<ChargerEvent, { kind: 'meter_values' }>): Promise<AsidePart[]> {
  const { chargerId } = ctx;
  const maxW = await chargerMaxW(deps, ctx);
  return deps.db.transaction().execute(async (trx) => {
    const namedId = namedTransactionOf(ev);
    const named = namedId !== null ? await findByTransactionId(trx, chargerId, namedId) : undefined;
    // D262: the readings of a transaction whose start is in the quarantine are kept with it, not placed by time
    if (namedId !== null && !named && (await quarantinedStart(trx, chargerId, namedId))) throw startQuarantined(namedId);
    if (named) await reopenIfStillRunning(trx, named, ev.readings);
    // the readings grouped by the session they belong to ('' = none), each group stored in one statement
    const groups = new Map<string, { session: SessionRow | undefined; readings: EnergyReading[] }>();
    // C4.6: a missing/zero/unknown transactionId is attached by connector and time (one lookup for all the
    // readings); connector 0 stays station-level
    const placed = named || ev.connectorId <= 0 ? [] : await sessionsAt(trx, chargerId, ev.connectorId, ev.readings.map((r) => r.measuredAt));
    for (const [i, r] of ev.readings.entries()) {
      const session = named ?? placed[i];
      if (session && isCoarserCopy(session, r)) continue; // its meterStart or meterStop written coarser (D96)
      const key = session?.id ?? '';
      const group = groups.get(key);
      if (group) group.readings.push(r);
      else groups.set(key, { session, readings: [r] });
    }
    const changed = new Set<string>();
    for (const [id, g] of groups) {
      // a reading of a session is stored under the session's connector, whatever connectorId the message carried
      if (await storeReadings(trx, chargerId, g.session?.connector_id ?? ev.connectorId, id === '' ? null : id, g.readings, deps.clock())) changed.add(id);
    }
    // the named session was read and locked in this transaction and only its status may have changed since
    // (reopenIfStillRunning); sessions placed by time are read again, locked. A session whose readings were all
    // stored already, as sent (a replay), keeps its energy: its full recompute (every month of it) is not run.
    for (const [id, g] of groups) if (g.session && changed.has(id)) await updateSessionEnergy(trx, id, maxW, g.readings, g.session === named ? named : undefined);
    const aside = await placeSignedValues(trx, named ? { sessionId: named.id } : { chargerId, connectorId: ev.connectorId }, ev.signed);
    await holdInvalidSignatures(trx, chargerId, ev.signed, maxW);
    // C4.11: quarantined whole only when nothing in it could be used
    if (ev.readings.length === 0 && aside.length > 0 && aside.length === (ev.signed?.length ?? 0)) {
      throw new UnplaceableMessage(aside[0]!.reason);
    }
    return aside;
  });
}
