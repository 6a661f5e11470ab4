// D225: the production warning that GET /metrics is open (D218) is written once per service, not once per worker:
// with WORKERS=2 the primary writes it and the workers do not. A real process with two workers (src/cluster.ts).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/database.ts';
import { TEST_OPERATOR } from '../helpers/app.ts';
import { createTestDb } from '../helpers/db.ts';
import { eventually } from '../helpers/ocpp-factories.ts';
import { startServiceProcess } from '../helpers/service-process.ts';

describe.skipIf(!process.env.DATABASE_URL)('D225: metrics.open with WORKERS above 1', () => {
  it('two workers in production without METRICS_TOKEN: one metrics.open line, from the primary', { timeout: 120_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-metrics-open-'));
    const tdb = await createTestDb();
    await tdb.close();
    const h = await createDb({ DATABASE_URL: tdb.url!, poolSize: 1 });
    const svc = await startServiceProcess({
      ...TEST_OPERATOR,
      DATABASE_URL: tdb.url!,
      WORKERS: '2',
      APP_ENV: 'production',
      DATA_ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64'),
      DATA_DIR: dataDir,
      JOBS_ENABLED: 'false',
      LOG_LEVEL: 'warn',
    });
    try {
      // both workers have started (each holds a lease once it listens)
      await eventually(async () => expect(new Set((await h.db.selectFrom('ocpp_instances').select('pid').execute()).map((l) => l.pid)).size).toBe(2), 60_000);
      const json = svc
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { event?: string; pid?: number; msg?: string });
      const open = json.filter((l) => l.event === 'metrics.open');
      expect(open).toHaveLength(1);
      expect(open[0]!.pid).toBe(svc.child.pid); // the primary's
      expect(String(open[0]!.msg)).toMatch(/METRICS_TOKEN is not set/);
      // the behaviour stays: the scrape answers without a token
      expect((await fetch(`${svc.url}/metrics`, { headers: { connection: 'close' } })).status).toBe(200);
    } finally {
      expect(await svc.kill('SIGTERM')).toBe(0);
      await h.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
