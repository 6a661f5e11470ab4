// C4.10 process-level handler (src/main.ts): an error nothing caught is logged fatal with its stack, the service
// stops cleanly, and the process exits 1 so a supervisor restarts it (docker-compose: restart: unless-stopped).
// The error is injected by a test-only preload on SIGUSR2; the fuzz test shows hostile input never gets here.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';

const preload = path.resolve('test/service/fixtures/crash-on-signal.mjs');
const started: ServiceProcess[] = [];
const dbs: TestDb[] = [];
const dirs: string[] = [];

afterAll(async () => {
  for (const p of started) await p.kill('SIGKILL');
  for (const d of dbs) await d.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function start(kind: string): Promise<ServiceProcess> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-crash-'));
  dirs.push(dataDir);
  const db = process.env.DATABASE_URL ? await createTestDb() : undefined;
  if (db) dbs.push(db);
  const svc = await startServiceProcess({
    DATABASE_URL: db?.url,
    DATA_DIR: dataDir,
    APP_ENV: 'sandbox',
    JOBS_ENABLED: 'false',
    CRASH_KIND: kind,
    NODE_OPTIONS: `--import ${preload}`,
  });
  started.push(svc);
  return svc;
}

const fatalLines = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.level === 60);

describe('uncaught errors (C4.10)', () => {
  for (const [kind, message] of [
    ['exception', 'test-only uncaught exception'],
    ['rejection', 'test-only unhandled rejection'],
  ] as const) {
    it(`an unhandled ${kind}: fatal log line with the stack, clean stop, exit 1`, async () => {
      const svc = await start(kind);
      expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
      svc.child.kill('SIGUSR2');
      expect(await svc.exited).toBe(1);
      const fatal = fatalLines(svc.output());
      expect(fatal[0]).toMatchObject({
        kind: kind === 'exception' ? 'uncaughtException' : 'unhandledRejection',
        err: { type: 'Error', message, stack: expect.stringContaining('crash-on-signal.mjs') },
      });
      expect(fatal.at(-1)).toMatchObject({ msg: 'stopped after an uncaught error; exiting with 1' });
    }, 120_000); // a process start (migrations on PGlite) on a busy machine
  }
});
