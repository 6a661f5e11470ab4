// Hostile values inside live sessions. The fuzz sends its garbage on transactions the gateway never gave, so it
// never reached the path a fleet's readings take: a message that continues a session its socket remembers, written
// set-based in a batch with other chargers' (group commit), declined to the transaction's way or to the
// one-message path when anything in it does not fit. Here several chargers of each protocol each run a session and
// send, at once, the session's periodic message with one field replaced by a hostile value, then a valid reading,
// field by field. Every message must be answered (a CALLERROR only without database or stack text), every valid
// reading acknowledged must be stored, the socket must stay usable, nothing may be logged as an error, and each
// session's stored energy must be what the full recompute makes of its stored readings (C4.5).
import { Writable } from 'node:stream';
import pino from 'pino';
import type { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundledCatalog } from '../../src/domain/catalog/load.ts';
import { maxPowerW } from '../../src/domain/charging/readings.ts';
import { recomputeSession } from '../../src/domain/charging/session-energy.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { fieldPaths, withField } from '../helpers/field-mutations.ts';
import { anOcppCharger, connectCharger, energyValue, isoSeconds, type OcppProtocol, type TestCharger } from '../helpers/ocpp-factories.ts';

const SQL_OR_STACK = /select|insert|update|violat|constraint|syntax|postgres|relation|\bat \w+ \(|\.ts:\d+|invalid byte|out of range for type/i;
const HOSTILE: unknown[] = ['a\u0000b', '', 'x'.repeat(300), -1, 0, 2.5, 2 ** 31, 1e21, '1e21', '-1', null, true, [], {}, '2026-13-45T25:61:00Z', '__proto__'];
const CHARGERS = 4;

const errors: Array<Record<string, unknown>> = [];
const logStream = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n')) {
      if (!line) continue;
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (Number(entry.level) >= 50) errors.push(entry);
    }
    done();
  },
});

let svc: TestService;
let user: { userId: string };
beforeAll(async () => {
  svc = await createTestService({ listen: true, logger: pino({ level: 'warn' }, logStream) });
  await loadBundledCatalog(svc.deps.db);
  user = await aUser(svc.deps);
});
afterAll(() => svc?.close());

interface Live {
  ch: TestCharger;
  cli: RPCClient;
  tx: string | number;
  seqNo: number;
  /** the register readings this charger had acknowledged as valid: [ISO time, Wh] */
  acked: Array<[string, number]>;
}

/** The session's periodic message (1.6 MeterValues, 2.0.1 TransactionEvent Updated) at `at` with `wh`. */
function periodic(p: OcppProtocol, l: Live, at: string, wh: number): { action: string; payload: Record<string, unknown> } {
  if (p === 'ocpp1.6') {
    return { action: 'MeterValues', payload: { connectorId: 1, transactionId: l.tx, meterValue: [energyValue(p, at, wh, { context: 'Sample.Periodic' })] } };
  }
  return {
    action: 'TransactionEvent',
    payload: {
      eventType: 'Updated', timestamp: at, triggerReason: 'MeterValuePeriodic', seqNo: l.seqNo++, transactionInfo: { transactionId: l.tx },
      evse: { id: 1, connectorId: 1 }, meterValue: [energyValue(p, at, wh, { context: 'Sample.Periodic' })],
    },
  };
}

/** ocpp_ingest_messages_total by path (one_statement, set_based, handler, fallback) */
async function ingestPaths(): Promise<Record<string, number>> {
  const m = svc.deps.metrics.getSingleMetric('ocpp_ingest_messages_total');
  const out: Record<string, number> = {};
  for (const v of (await m!.get()).values) out[String(v.labels.path)] = v.value;
  return out;
}

/** A call's answer, or what went wrong with it: a CALLERROR is fine, one showing internals is not; no answer is not. */
async function answered(cli: RPCClient, action: string, payload: unknown, what: string): Promise<string | null> {
  try {
    await cli.call(action, payload);
    return null;
  } catch (err) {
    const e = err as { rpcErrorCode?: string; message?: string; details?: unknown };
    if (!e.rpcErrorCode) return `${what}: no answer (${e.message})`;
    const text = `${e.message ?? ''} ${JSON.stringify(e.details ?? {})}`;
    return SQL_OR_STACK.test(text) ? `${what}: a CALLERROR showing internals: ${text.slice(0, 200)}` : null;
  }
}

describe.each(['ocpp1.6', 'ocpp2.0.1'] as const)('hostile values in live sessions over %s', (p) => {
  it('every field of the periodic message in turn, several chargers at once: answered, valid readings kept, energy as recomputed', { timeout: 120_000 }, async () => {
    // ten seconds a step from two hours ago: every message, mutated or not, at its own instant in the past
    const T0 = Math.floor(Date.now() / 1000) * 1000 - 2 * 3_600_000;
    let step = 0;
    const next = () => isoSeconds(T0 + ++step * 10_000);
    let wh = 10_000;

    const live: Live[] = [];
    for (let i = 0; i < CHARGERS; i++) {
      const ch = await anOcppCharger(svc, user);
      const cli = await connectCharger(svc, ch, p);
      const at = next();
      let tx: string | number;
      if (p === 'ocpp1.6') {
        tx = ((await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: wh, timestamp: at })) as { transactionId: number }).transactionId;
      } else {
        tx = `H-${ch.chargerId.slice(0, 8)}`;
        await cli.call('TransactionEvent', {
          eventType: 'Started', timestamp: at, triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: tx },
          evse: { id: 1, connectorId: 1 }, meterValue: [energyValue(p, at, wh, { context: 'Transaction.Begin' })],
        });
      }
      live.push({ ch, cli, tx, seqNo: 1, acked: [] });
    }

    const wrong: string[] = [];
    const pathsBefore = await ingestPaths();
    const template = periodic(p, { ...live[0]!, seqNo: 0 }, next(), wh).payload;
    const mutations = fieldPaths(template, { root: false, items: 1 }).flatMap((at) => HOSTILE.map((value) => ({ at, value })));
    try {
      for (let k = 0; k < mutations.length; k += CHARGERS) {
        // each charger its own mutation, at once (they share batches), then each a valid reading, at once
        const round = live.map((l, i) => ({ l, m: mutations[k + i] })).filter((x) => x.m !== undefined);
        const at = next();
        const results = await Promise.all(
          round.map(({ l, m }) => {
            const { action, payload } = periodic(p, l, at, wh);
            return answered(l.cli, action, withField(payload, m!.at, m!.value), `${action} ${m!.at.join('.')} = ${JSON.stringify(m!.value)?.slice(0, 30)}`);
          }),
        );
        wrong.push(...results.filter((r): r is string => r !== null));
        const valid = next();
        wh += 100;
        const ok = await Promise.all(
          live.map((l) => {
            const { action, payload } = periodic(p, l, valid, wh);
            return answered(l.cli, action, payload, `valid ${action} at ${valid}`).then((w) => (w === null ? (l.acked.push([valid, wh]), null) : w));
          }),
        );
        wrong.push(...ok.filter((r): r is string => r !== null));
      }
      // the sockets still work
      for (const l of live) wrong.push(...[await answered(l.cli, 'Heartbeat', {}, 'Heartbeat after the run')].filter((r): r is string => r !== null));
    } finally {
      await Promise.all(live.map((l) => l.cli.close()));
    }
    expect(wrong).toEqual([]);
    // not vacuous: the valid readings went the remembered sessions' one statement, the hostile ones the other ways
    const pathsAfter = await ingestPaths();
    const grew = (path: string) => (pathsAfter[path] ?? 0) - (pathsBefore[path] ?? 0);
    expect(grew('one_statement')).toBeGreaterThan(mutations.length / 2);
    expect(grew('handler') + grew('fallback')).toBeGreaterThan(0);
    expect(errors.map((e) => `${String(e.msg)} ${JSON.stringify(e.err ?? '')}`.slice(0, 300))).toEqual([]);

    for (const l of live) {
      // every valid reading acknowledged is stored, with its value
      const stored = await svc.deps.db
        .selectFrom('meter_readings')
        .select(['measured_at', 'wh'])
        .where('charger_id', '=', l.ch.chargerId)
        .where('measurand', '=', 'Energy.Active.Import.Register')
        .execute();
      const have = new Set(stored.map((r) => `${r.measured_at.toISOString()} ${r.wh}`));
      const missing = l.acked.filter(([at, w]) => !have.has(`${new Date(at).toISOString()} ${w}`));
      expect(missing).toEqual([]);
      expect(l.acked.length).toBe(Math.ceil(mutations.length / CHARGERS));
      // and the session's energy is what the full recompute makes of its stored readings
      const session = await svc.deps.db.selectFrom('charging_sessions').select('id').where('charger_id', '=', l.ch.chargerId).where('transaction_id', '=', String(l.tx)).executeTakeFirstOrThrow();
      const state = () =>
        svc.deps.db
          .selectFrom('charging_sessions')
          .select(['energy_wh', 'held_wh', 'last_meter_wh', 'last_reading_at', 'review_status'])
          .where('id', '=', session.id)
          .executeTakeFirstOrThrow();
      const before = await state();
      await recomputeSession(svc.deps.db, session.id, await maxPowerW(svc.deps.db, l.ch.chargerId, svc.deps.config.OCPP_MAX_POWER_W));
      expect(await state()).toEqual(before);
    }
  });

  it('starts and stops with one field hostile, several chargers at once: answered, valid sessions ended, energy as recomputed', { timeout: 120_000 }, async () => {
    const T0 = Math.floor(Date.now() / 1000) * 1000 - 4 * 3_600_000;
    let step = 0;
    const next = () => isoSeconds(T0 + ++step * 10_000);
    let n = 0;
    const start = (l: Live, at: string, tx: string): { action: string; payload: Record<string, unknown> } =>
      p === 'ocpp1.6'
        ? { action: 'StartTransaction', payload: { connectorId: 1, idTag: 'TAG', meterStart: 10_000, timestamp: at } }
        : {
            action: 'TransactionEvent',
            payload: {
              eventType: 'Started', timestamp: at, triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: tx },
              evse: { id: 1, connectorId: 1 }, idToken: { idToken: 'TAG', type: 'ISO14443' }, meterValue: [energyValue(p, at, 10_000, { context: 'Transaction.Begin' })],
            },
          };
    const stop = (l: Live, at: string): { action: string; payload: Record<string, unknown> } =>
      p === 'ocpp1.6'
        ? { action: 'StopTransaction', payload: { transactionId: l.tx, idTag: 'TAG', meterStop: 10_300, timestamp: at, reason: 'Local', transactionData: [energyValue(p, at, 10_300)] } }
        : {
            action: 'TransactionEvent',
            payload: {
              eventType: 'Ended', timestamp: at, triggerReason: 'StopAuthorized', seqNo: l.seqNo++, transactionInfo: { transactionId: l.tx, stoppedReason: 'Local' },
              evse: { id: 1, connectorId: 1 }, meterValue: [energyValue(p, at, 10_300, { context: 'Transaction.End' })],
            },
          };

    const live: Live[] = [];
    for (let i = 0; i < CHARGERS; i++) {
      const ch = await anOcppCharger(svc, user);
      live.push({ ch, cli: await connectCharger(svc, ch, p), tx: '', seqNo: 0, acked: [] });
    }
    const tmpl = { tx: 'T', seqNo: 0 } as Live;
    const starts = fieldPaths(start(tmpl, next(), 'T').payload, { root: false, items: 1 }).flatMap((at) => HOSTILE.map((value) => ({ at, value })));
    const stops = fieldPaths(stop(tmpl, next()).payload, { root: false, items: 1 }).flatMap((at) => HOSTILE.map((value) => ({ at, value })));
    const rounds = Math.max(starts.length, stops.length);
    const wrong: string[] = [];
    const ended: Array<{ chargerId: string; tx: string }> = [];
    const collect = (r: Array<string | null>) => wrong.push(...r.filter((x): x is string => x !== null));
    try {
      for (let k = 0; k < rounds; k += CHARGERS) {
        const round = live.map((l, i) => ({ l, a: starts[(k + i) % starts.length]!, b: stops[(k + i) % stops.length]! }));
        // a hostile start, then a valid one with its reading, then a hostile stop of that session, then a valid stop
        const badAt = next();
        collect(await Promise.all(round.map(({ l, a }) => {
          const m = start(l, badAt, `H-${++n}-bad`);
          return answered(l.cli, m.action, withField(m.payload, a.at, a.value), `${m.action} start ${a.at.join('.')} = ${JSON.stringify(a.value)?.slice(0, 30)}`);
        })));
        const at = next();
        collect(await Promise.all(round.map(async ({ l }) => {
          const m = start(l, at, `H-${++n}`);
          try {
            const res = (await l.cli.call(m.action, m.payload)) as { transactionId?: number };
            l.tx = p === 'ocpp1.6' ? res.transactionId! : (m.payload.transactionInfo as { transactionId: string }).transactionId;
            l.seqNo = 1;
            return null;
          } catch (err) {
            return `valid start: ${(err as Error).message}`;
          }
        })));
        const readAt = next();
        collect(await Promise.all(round.map(({ l }) => {
          const m = periodic(p, l, readAt, 10_200);
          return answered(l.cli, m.action, m.payload, 'valid reading').then((w) => (w === null ? (l.acked.push([readAt, 10_200]), null) : w));
        })));
        const stopAt = next();
        collect(await Promise.all(round.map(({ l, b }) => {
          const m = stop(l, stopAt);
          return answered(l.cli, m.action, withField(m.payload, b.at, b.value), `${m.action} stop ${b.at.join('.')} = ${JSON.stringify(b.value)?.slice(0, 30)}`);
        })));
        const validStopAt = next();
        collect(await Promise.all(round.map(({ l }) => {
          const m = stop(l, validStopAt);
          ended.push({ chargerId: l.ch.chargerId, tx: String(l.tx) });
          return answered(l.cli, m.action, m.payload, 'valid stop');
        })));
      }
      for (const l of live) collect([await answered(l.cli, 'Heartbeat', {}, 'Heartbeat after the run')]);
    } finally {
      await Promise.all(live.map((l) => l.cli.close()));
    }
    expect(wrong).toEqual([]);
    expect(errors.map((e) => `${String(e.msg)} ${JSON.stringify(e.err ?? '')}`.slice(0, 300))).toEqual([]);

    // every session the valid starts made is ended, every valid reading acknowledged is stored
    for (const { chargerId, tx } of ended) {
      const s = await svc.deps.db.selectFrom('charging_sessions').select(['status']).where('charger_id', '=', chargerId).where('transaction_id', '=', tx).executeTakeFirstOrThrow();
      expect(s.status, `${chargerId} ${tx}`).toBe('completed');
    }
    for (const l of live) {
      const stored = await svc.deps.db.selectFrom('meter_readings').select(['measured_at', 'wh']).where('charger_id', '=', l.ch.chargerId).execute();
      const have = new Set(stored.map((r) => `${r.measured_at.toISOString()} ${r.wh}`));
      expect(l.acked.filter(([at, w]) => !have.has(`${new Date(at).toISOString()} ${w}`))).toEqual([]);
    }
    // and every session of these chargers, the hostile starts' too, holds what the full recompute makes of its readings
    const sessions = await svc.deps.db.selectFrom('charging_sessions').select(['id', 'charger_id']).where('charger_id', 'in', live.map((l) => l.ch.chargerId)).execute();
    expect(sessions.length).toBeGreaterThanOrEqual(ended.length);
    const state = (id: string) =>
      svc.deps.db.selectFrom('charging_sessions').select(['energy_wh', 'held_wh', 'last_meter_wh', 'last_reading_at', 'review_status', 'status', 'meter_stop_wh']).where('id', '=', id).executeTakeFirstOrThrow();
    for (const s of sessions) {
      const before = await state(s.id);
      await recomputeSession(svc.deps.db, s.id, await maxPowerW(svc.deps.db, s.charger_id, svc.deps.config.OCPP_MAX_POWER_W));
      expect(await state(s.id), s.id).toEqual(before);
    }
  });
});
