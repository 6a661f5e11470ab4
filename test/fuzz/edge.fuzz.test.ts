// Issue 10 "What must be shown": a bounded, seeded fuzz run against the service as a child process. Random and
// mutated OCPP frames of both versions (raw `ws` frames and a real RPCClient), malformed upgrade requests and
// malformed HTTP requests on every documented route, all at once. Afterwards the process is alive, /healthz
// answers, no log line was a fatal 'uncaught' or oversized (C4.10), every CALLERROR was free of SQL/stack
// text (C4.11), every HTTP error was in the {error, detail} shape, and every reading the service acknowledged
// is in meter_readings. Replay a run: FUZZ_SEED=<printed seed>; more cases: FUZZ_CASES=<n> (npm run bench:fuzz).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createDb } from '../../src/db/database.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';
import { runEdgeFuzz } from './edge-run.ts';
import { type Finding, type LaneCtx, type Reading, runRawLane, runRpcLane } from './lanes.ts';
import { Prng, fuzzSettings } from './prng.ts';

const { seed, cases } = fuzzSettings(2400);
const FRAME_CAP = 262_144;
const ADMIN_TOKEN = 'fuzz-admin-token-0123456789';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-fuzz-'));
let svc: ServiceProcess | undefined;
let testDb: TestDb | undefined;

afterAll(async () => {
  await svc?.kill('SIGKILL');
  await testDb?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it(`survives ${cases} hostile cases (seed ${seed}) and keeps every acknowledged reading`, async () => {
  console.log(`fuzz: seed ${seed}, ${cases} cases (replay with FUZZ_SEED=${seed} FUZZ_CASES=${cases})`);
  if (process.env.DATABASE_URL) testDb = await createTestDb();
  const high = '1000000';
  svc = await startServiceProcess({
    DATABASE_URL: testDb?.url, DATA_DIR: dataDir, ADMIN_TOKEN, APP_ENV: 'sandbox', JOBS_ENABLED: 'false', LOG_LEVEL: 'info',
    OCPP_MAX_FRAME_BYTES: String(FRAME_CAP),
    // high limits, so the garbage reaches the routes instead of the rate limiter
    RATE_LIMIT_PUBLIC_PER_MIN: high, RATE_LIMIT_PERSONAL_PER_MIN: high, RATE_LIMIT_PARTNER_PER_MIN: high, RATE_LIMIT_CPO_PER_MIN: high,
    RATE_LIMIT_TOKEN_PER_MIN: high, RATE_LIMIT_TOKEN_IP_PER_MIN: high, RATE_LIMIT_ADMIN_FAIL_PER_MIN: high,
  });
  const service = svc;
  const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo-credentials.json'), 'utf8')) as { user: { token: string } };
  const chargers: Array<{ chargerId: string; identity: string; password: string }> = [];
  for (let i = 0; i < 6; i++) {
    const res = await fetch(`${service.url}/chargers`, {
      method: 'POST', headers: { authorization: `Bearer ${demo.user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ nickname: `fuzz ${i}`, connection_type: 'ocpp', ocpp_identity: `FZ-${seed}-${i}` }),
    });
    expect(res.status).toBe(201);
    const b = (await res.json()) as { id: string; ocpp: { identity: string; password: string } };
    chargers.push({ chargerId: b.id, identity: b.ocpp.identity, password: b.ocpp.password });
  }

  const root = new Prng(seed);
  const findings: Finding[] = [];
  const readings: Reading[] = [];
  const wsBase = service.url.replace(/^http/, 'ws');
  const laneCases = Math.max(10, Math.round(cases * 0.12));
  const lanes: LaneCtx[] = (['ocpp1.6', 'ocpp2.0.1', 'ocpp1.6', 'ocpp2.0.1'] as const).map((proto, i) => ({
    wsBase, charger: chargers[i]!, proto, r: root.fork(i), cases: laneCases, frameCap: FRAME_CAP, findings, readings,
    stats: { frames: 0, reconnects: 0, callErrors: 0, slowestMs: 0, slowest: '' },
  }));
  const edge = runEdgeFuzz({
    url: service.url, r: root.fork(10), upgradeCases: Math.round(cases * 0.17), httpCases: Math.round(cases * 0.35),
    upgradeChargers: chargers.slice(4), tokens: { admin: ADMIN_TOKEN, personal: demo.user.token }, findings, alive: () => service.alive(),
  });
  const laneRuns = lanes.map((l, i) => (i < 2 ? runRawLane(l) : runRpcLane(l)).catch((err: Error) => {
    findings.push({ kind: 'lane-aborted', input: `${l.proto} lane ${i}`, symptom: `${err.message} (process alive: ${service.alive()})` });
  }));
  const [edgeStats] = await Promise.all([edge, ...laneRuns]);
  for (const [i, l] of lanes.entries()) {
    console.log(`fuzz: ${i < 2 ? 'raw' : 'rpc'} ${l.proto} lane: ${l.stats.frames} frames, ${l.stats.callErrors} CALLERRORs, ${l.stats.reconnects} reconnects, slowest case ${Math.round(l.stats.slowestMs)} ms: ${l.stats.slowest.slice(0, 200)}`);
  }
  console.log(`fuzz: ${edgeStats.upgrades} upgrade requests, ${edgeStats.http} HTTP requests; statuses ${JSON.stringify(edgeStats.statuses)}`);

  const report = () => {
    // every finding counts in the assertion; the log shows the first three of each kind
    const shown = new Map<string, number>();
    for (const f of findings) {
      const n = (shown.get(f.kind) ?? 0) + 1;
      shown.set(f.kind, n);
      if (n <= 3) console.log(`fuzz FOUND [${f.kind}] seed ${seed}: ${f.input.slice(0, 400)}\n    → ${f.symptom.slice(0, 400)}`);
    }
    for (const [kind, n] of shown) if (n > 3) console.log(`fuzz FOUND [${kind}]: ${n - 3} more`);
    const errors = service.output().split('\n').filter((l) => /"level":(50|60)|uncaught|URIError|TypeError/.test(l));
    for (const l of errors.slice(0, 10)) console.log(`fuzz: service error line: ${l.slice(0, 600)}`);
  };
  // the process is alive and answers
  if (!service.alive()) report();
  expect(service.alive(), `the service exited:\n${service.output().slice(-4000)}`).toBe(true);
  const latencies: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    const res = await fetch(`${service.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
    latencies.push(performance.now() - t);
    expect(res.status).toBe(200);
  }
  console.log(`fuzz: /healthz after the run answered 200 in ${latencies.map((x) => x.toFixed(1)).join(', ')} ms`);

  // the log: no fatal 'uncaught' line, no line longer than the C4.10 cap allows (2 KiB of charger text + the rest)
  const lines = service.output().split('\n');
  expect(lines.filter((l) => /uncaught/i.test(l)).map((l) => l.slice(0, 500))).toEqual([]);
  // an error-level line is an internal failure: garbage must be refused, not crash a handler
  const seen = new Set<string>();
  for (const l of lines.filter((x) => /^\{.*"level":(50|60)/.test(x))) {
    let j: { msg?: string; err?: { type?: string; message?: string; stack?: string }; method?: string; action?: string };
    try {
      j = JSON.parse(l);
    } catch {
      j = { msg: l.slice(0, 300) };
    }
    const key = `${j.msg} ${j.err?.type}: ${j.err?.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    findings.push({ kind: 'error-log', input: `OCPP action ${j.method ?? j.action ?? '?'}`, symptom: `${key} ${(j.err?.stack ?? '').split('\n').slice(1, 3).join(' ').slice(0, 200)}` });
  }
  const long = lines.filter((l) => l.length > 16 * 1024);
  for (const l of long) findings.push({ kind: 'oversized-log-line', input: '(see the line)', symptom: `${l.length} characters: ${l.slice(0, 300)}` });

  // every reading the service acknowledged is stored (PGlite: stop the child first, one process per data dir)
  const acked = readings.filter((x) => x.acked);
  for (const [i, l] of lanes.entries()) {
    const mine = readings.filter((x) => x.chargerId === l.charger.chargerId);
    console.log(`fuzz: lane ${i}: ${mine.filter((x) => x.acked).length} of ${mine.length} well-formed readings acknowledged`);
  }
  let stored: Array<{ charger_id: string; measured_at: Date; wh: string }>;
  const ids = lanes.map((l) => l.charger.chargerId);
  if (testDb) {
    stored = await testDb.db.selectFrom('meter_readings').select(['charger_id', 'measured_at', 'wh']).where('charger_id', 'in', ids).execute();
  } else {
    await service.kill('SIGTERM');
    const h = await createDb({ DATA_DIR: dataDir });
    try {
      stored = await h.db.selectFrom('meter_readings').select(['charger_id', 'measured_at', 'wh']).where('charger_id', 'in', ids).execute();
    } finally {
      await h.close();
    }
  }
  const have = new Set(stored.map((s) => `${s.charger_id}|${s.measured_at.getTime()}|${s.wh}`));
  const lost = acked.filter((x) => !have.has(`${x.chargerId}|${Date.parse(x.at)}|${x.wh}`));
  console.log(`fuzz: ${acked.length} acknowledged readings, ${lost.length} missing from meter_readings`);
  for (const x of lost) findings.push({ kind: 'lost-reading', input: x.via, symptom: `acknowledged ${x.wh} Wh at ${x.at} (charger ${x.chargerId}) is not in meter_readings` });

  report();
  expect(findings.map((f) => `[${f.kind}] ${f.input.slice(0, 200)} → ${f.symptom.slice(0, 200)}`)).toEqual([]);
  // not vacuous: each lane had readings acknowledged
  for (const l of lanes) expect(acked.some((x) => x.chargerId === l.charger.chargerId)).toBe(true);
}, 120_000 + cases * 100);
