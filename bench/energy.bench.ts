// `npm run bench:energy -- [--sessions 5000] [--chargers 10] [--runs 7]`
//
// GET /energy's overview of one owner with years of history, timed where its cost lies: the domain call
// energyOverview on the service's own database, in-process (PostgreSQL, DATABASE_URL required). A fresh database holds
// one owner with --chargers MID chargers on one account and --sessions completed sessions from December 2024 on, one
// every 3.4 hours, each with 10 to 50 register readings five minutes apart. Prints p50/max of --runs calls (the first
// left out as cold) and the totals, so two versions can be compared on the same data.
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { energyOverview } from '../src/domain/energy/overview.ts';
import { aCharger, anAccountWithConnection } from '../test/helpers/energy-factories.ts';
import { aUser } from '../test/helpers/factories.ts';
import { runBench, withBenchService } from './bench-service.ts';

const { values: a } = parseArgs({
  options: { sessions: { type: 'string', default: '5000' }, chargers: { type: 'string', default: '10' }, runs: { type: 'string', default: '7' } },
});
const base = process.env.DATABASE_URL;
if (!base) {
  process.stderr.write('bench:energy needs DATABASE_URL (PostgreSQL)\n');
  process.exit(2);
}

async function main(): Promise<void> {
  await withBenchService(base!, 'energy', async (deps) => {
    const user = await aUser(deps);
    const acc = await anAccountWithConnection(deps, { ownerUserId: user.userId, eligible: true });
    const chargers = [acc.midChargerId!];
    for (let i = 1; i < Number(a.chargers); i++) chargers.push(await aCharger(deps, { accountId: acc.accountId, mid: true, ownerUserId: user.userId }));
    const T0 = Date.parse('2024-12-01T00:00:00Z');
    let readings = 0;
    for (let k = 0; k < Number(a.sessions); k++) {
      const ch = chargers[k % chargers.length]!;
      const start = T0 + k * 3.4 * 3_600_000;
      const n = 10 + (k % 41);
      readings += n + 1;
      await sql`with s as (insert into charging_sessions (charger_id, transaction_id, started_at, ended_at, meter_start_wh, meter_stop_wh,
          last_meter_wh, first_reading_at, last_reading_at, energy_wh, status)
        values (${ch}, ${'tx' + k}, ${new Date(start)}, ${new Date(start + n * 300_000)}, ${k * 100_000}, ${k * 100_000 + n * 200},
          ${k * 100_000 + n * 200}, ${new Date(start)}, ${new Date(start + n * 300_000)}, ${n * 200}, 'completed') returning id)
        insert into meter_readings (charger_id, session_id, connector_id, measured_at, wh)
        select ${ch}, s.id, 1, ${new Date(start)}::timestamptz + make_interval(secs => g * 300), ${k * 100_000} + g * 200
        from s, generate_series(0, ${n}) g`.execute(deps.db);
    }
    await sql`analyze`.execute(deps.db);
    const ms: number[] = [];
    let last: Awaited<ReturnType<typeof energyOverview>> | undefined;
    for (let i = 0; i <= Number(a.runs); i++) {
      const t0 = performance.now();
      last = await energyOverview(deps, user.userId);
      if (i > 0) ms.push(performance.now() - t0);
    }
    const p50 = [...ms].sort((x, y) => x - y)[Math.floor(ms.length / 2)]!;
    process.stdout.write(
      `GET /energy overview, ${a.sessions} sessions (${readings} readings) on ${a.chargers} chargers, ${a.runs} runs:\n` +
        `  p50 ${p50.toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms; total_kwh_all ${last!.total_kwh_all}, total_sessions_all ${last!.total_sessions_all}\n`,
    );
  });
}

runBench('bench:energy', main);
