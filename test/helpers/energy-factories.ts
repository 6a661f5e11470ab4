// Row factories for the energy tests: accounts, connections, chargers, sessions with register readings and
// monthly energy rows, inserted directly (tests on the real database; no HTTP needed to set the stage).
import crypto from 'node:crypto';
import type { Deps } from '../../src/deps.ts';
import { recomputeSession } from '../../src/domain/charging/session-energy.ts';

let seq = 0;
const ean = () => '871' + String(crypto.randomInt(0, 1e9)).padStart(9, '0') + String(crypto.randomInt(0, 1e6)).padStart(6, '0');

export interface AccountOpts {
  partnerId?: string | null;
  ownerUserId?: string | null;
  /** matched EAN, active mandate, IBAN and one MID charger (C2.8); default false */
  eligible?: boolean;
  payoutHandler?: 'joulo_pays_customer' | 'via_cpo_invoicing';
  cpoExternalRef?: string | null;
  feePct?: string | null;
  connectionStatus?: 'active' | 'archived';
  createdAt?: Date;
}

export async function anAccountWithConnection(
  deps: Deps,
  o: AccountOpts = {},
): Promise<{ accountId: string; connectionId: string; midChargerId: string | null }> {
  const n = ++seq;
  const a = await deps.db
    .insertInto('accounts')
    .values({
      partner_id: o.partnerId ?? null,
      owner_user_id: o.ownerUserId ?? null,
      cpo_external_ref: o.cpoExternalRef ?? null,
      display_name: `Energy test ${n}`,
      payout_handler: o.payoutHandler ?? 'joulo_pays_customer',
      iban_encrypted: o.eligible ? deps.cipher.encrypt('NL91ABNA0417164300') : null,
      fee_pct: o.feePct ?? null,
      ...(o.createdAt ? { created_at: o.createdAt } : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const c = await deps.db
    .insertInto('connections')
    .values({
      account_id: a.id,
      ean_code: ean(),
      street: 'Teststraat',
      house_number: String(n),
      postal_code: '1011AB',
      city: 'Amsterdam',
      status: o.connectionStatus ?? 'active',
      ...(o.eligible
        ? { ean_validation_status: 'matched' as const, mandate_status: 'active' as const, registration_status: 'ingediend' as const, mandate_valid_from: new Date('2026-01-01T00:00:00Z') }
        : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const midChargerId = o.eligible ? await aCharger(deps, { accountId: a.id, mid: true, ownerUserId: o.ownerUserId ?? null }) : null;
  return { accountId: a.id, connectionId: c.id, midChargerId };
}

export async function aCharger(
  deps: Deps,
  o: { accountId?: string | null; mid: boolean; ownerUserId?: string | null; status?: 'active' | 'removed' },
): Promise<string> {
  const n = ++seq;
  const r = await deps.db
    .insertInto('chargers')
    .values({
      account_id: o.accountId ?? null,
      owner_user_id: o.ownerUserId ?? null,
      nickname: `Charger ${n}`,
      mid_certified: o.mid,
      status: o.status ?? 'active',
      ocpp_identity: `energy-test-${n}-${crypto.randomBytes(3).toString('hex')}`,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return r.id;
}

/**
 * A session with its register readings: [timestamp, Wh] or [timestamp, Wh, anomaly]. Its energy_wh is the
 * gateway's: the forward steps that end at an unflagged reading (a flagged one is held, C4.5/C5.5).
 */
export async function aSession(
  deps: Deps,
  chargerId: string,
  readings: Array<[string, number] | [string, number, string]>,
): Promise<string> {
  const n = ++seq;
  const first = readings[0]!;
  const last = readings[readings.length - 1]!;
  let energy = 0;
  let held = 0;
  for (let i = 1; i < readings.length; i++) {
    const step = readings[i]![1] - readings[i - 1]![1];
    if (step <= 0) continue;
    if (readings[i]![2] === undefined) energy += step;
    else held += step;
  }
  const s = await deps.db
    .insertInto('charging_sessions')
    .values({
      charger_id: chargerId,
      transaction_id: `tx-${n}`,
      started_at: new Date(first[0]),
      ended_at: new Date(last[0]),
      meter_start_wh: first[1],
      meter_stop_wh: last[1],
      last_meter_wh: last[1],
      first_reading_at: new Date(first[0]),
      last_reading_at: new Date(last[0]),
      energy_wh: energy,
      ...(held > 0 ? { held_wh: held, review_status: 'held' as const, review_reason: readings.find((r) => r[2] !== undefined)![2]! } : {}),
      status: 'completed',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await deps.db
    .insertInto('meter_readings')
    .values(
      readings.map(([at, wh, anomaly]) => ({
        charger_id: chargerId,
        session_id: s.id,
        connector_id: 1,
        measured_at: new Date(at),
        wh,
        anomaly: anomaly ?? null,
      })),
    )
    .execute();
  return s.id;
}

/** A monthly energy row as the write path or the review would leave it. */
export async function anEnergyMonth(
  deps: Deps,
  o: { connectionId: string; month: string; kwh: string; status?: 'delivered' | 'in_review' | 'registered' | 'rejected'; ere?: string; sessions?: number; source?: 'cpo' | 'ocpp' },
): Promise<string> {
  const r = await deps.db
    .insertInto('energy_months')
    .values({
      connection_id: o.connectionId,
      month: o.month,
      kwh: o.kwh,
      sessions: o.sessions ?? 0,
      source: o.source ?? 'cpo',
      status: o.status ?? 'delivered',
      registered_at: o.status === 'registered' ? new Date('2026-09-01T00:00:00Z') : null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (o.ere !== undefined) {
    await deps.db.updateTable('energy_months').set({ ere: o.ere } as never).where('id', '=', r.id).execute();
  }
  return r.id;
}

/**
 * A register reading that arrives late for an existing session (an offline batch), stored as the gateway stores it:
 * the reading, then the session recomputed from all its readings (energy, span, updated_at) under its row lock.
 */
export async function aLateReading(deps: Deps, chargerId: string, sessionId: string, at: string, wh: number, anomaly: string | null = null): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await trx.selectFrom('charging_sessions').select('id').where('id', '=', sessionId).forUpdate().execute();
    await trx.insertInto('meter_readings').values({ charger_id: chargerId, session_id: sessionId, connector_id: 1, measured_at: new Date(at), wh, anomaly }).execute();
    await recomputeSession(trx, sessionId, deps.config.OCPP_MAX_POWER_W);
  });
}
