// README.md's quick-start cannot rot: this test starts the service as `npm start` does (a child process
// `node --import tsx src/main.ts` on embedded PGlite in a fresh DATA_DIR, sandbox, with the environment the
// README's start block sets), runs every `<!-- quickstart -->` sh block of README.md in order in one bash session
// (set -euo pipefail; the commands use curl --fail-with-body, so a non-2xx answer fails), and compares the last
// JSON line each block printed with the `<!-- quickstart:expect -->` json block under it. Only the base URL
// (localhost:8080 → the port the service got) is substituted. The marker convention is described in README.md.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';
import { matchExpected, parseQuickstart } from './quickstart.ts';

const root = path.resolve(import.meta.dirname, '../..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');

/** A port nobody listens on now: the service gets a fixed PORT, so PUBLIC_BASE_URL is http://localhost:<port> as with npm start. */
async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '0.0.0.0', () => r()));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

describe('README quick-start', () => {
  let service: ServiceProcess | undefined;
  let dataDir: string | undefined;
  afterAll(async () => {
    await service?.kill('SIGTERM');
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('has a start block and quick-start blocks with expected answers', () => {
    const qs = parseQuickstart(readme);
    expect(qs.start.command).toBe('npm start');
    expect(qs.blocks.length).toBeGreaterThanOrEqual(10);
    expect(qs.blocks.filter((b) => b.expect !== undefined).length).toBeGreaterThanOrEqual(10);
    // the lifecycle the README promises, in this order
    const script = qs.blocks.map((b) => b.script).join('\n');
    const order = ['/oauth/token', '/v1/accounts', '/v1/mandate-links', '/sign-mandate', '/v1/chargers', '/v1/sessions:batch', '/v1/ere-positions', '/chargers', '/energy', '/ere-position', 'npm run -s simulate', '/sessions', '/register-ere', '/sandbox/ean-recheck'];
    let at = 0;
    for (const p of order) {
      const i = script.indexOf(p, at);
      expect(i, `${p} after position ${at}`).toBeGreaterThanOrEqual(0);
      at = i;
    }
  });

  it('every command works as written against a freshly started service', async () => {
    const qs = parseQuickstart(readme);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-readme-'));
    // as `npm start`: sandbox on PGlite (no DATABASE_URL), default configuration plus the start block's variables
    const port = await freePort();
    service = await startServiceProcess({ DATA_DIR: dataDir, PORT: String(port), HOST: '0.0.0.0', LOG_LEVEL: 'warn', ...qs.start.env }, 120_000);
    expect(service.output()).toContain('Demo credentials');
    expect(service.url).toBe(`http://localhost:${port}`);
    const base = (s: string) => s.replaceAll('localhost:8080', `localhost:${port}`);

    const parts = ['set -euo pipefail'];
    qs.blocks.forEach((b, i) => {
      parts.push(`printf '\\n@@quickstart-begin-${i}@@\\n'`, base(b.script), `printf '\\n@@quickstart-end-${i}@@\\n'`);
    });
    // the simulator keeps its charger's meter between runs: in this run's data dir, not in $HOME
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? os.homedir(),
      DATA_DIR: dataDir,
      TERM: 'dumb',
      ERE_SIMULATOR_STATE_DIR: path.join(dataDir, 'simulator-state'),
    };
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn('bash', ['--noprofile', '--norc', '-c', parts.join('\n')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

    const failedAt = qs.blocks.findIndex((_, i) => !run.stdout.includes(`@@quickstart-end-${i}@@`));
    const context = () =>
      `block ${failedAt}:\n${qs.blocks[failedAt]?.script ?? ''}\n--- stdout ---\n${run.stdout.slice(-3000)}\n--- stderr ---\n${run.stderr.slice(-3000)}\n--- service ---\n${service!.output().slice(-3000)}`;
    expect(run.code, context()).toBe(0);
    expect(failedAt, context()).toBe(-1);

    qs.blocks.forEach((b, i) => {
      if (b.expect === undefined) return;
      const out = run.stdout.split(`@@quickstart-begin-${i}@@`)[1]!.split(`@@quickstart-end-${i}@@`)[0]!;
      const json = out
        .split('\n')
        .reverse()
        .map((l) => {
          try {
            return JSON.parse(l) as unknown;
          } catch {
            return undefined;
          }
        })
        .find((v) => v !== null && typeof v === 'object');
      expect(json, `block ${i} printed no JSON line:\n${b.script}\n${out}`).toBeDefined();
      const mismatches = matchExpected(JSON.parse(base(b.expect)), json);
      expect(mismatches, `block ${i}:\n${b.script}\nprinted ${JSON.stringify(json)}`).toEqual([]);
    });
  }, 300_000);
});
