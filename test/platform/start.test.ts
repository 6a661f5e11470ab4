// `npm start` as a process on embedded PGlite: it prints the base URL, the OCPP endpoint and (first start
// only) the demo credentials; /readyz answers; SIGTERM closes it with exit code 0.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const children: ChildProcess[] = [];

function start(dataDir: string): { child: ChildProcess; output: () => string; url: Promise<string> } {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    JOBS_ENABLED: 'false',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  const url = new Promise<string>((resolve, reject) => {
    const onData = (b: Buffer) => {
      out += b.toString();
      const m = /API:\s+(http:\/\/\S+)/.exec(out);
      if (m && /OCPP:/.test(out)) resolve(m[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  return { child, output: () => out, url };
}

// 'close' (not 'exit'): it comes after the child's stdout has been read to the end
const exitCode = (child: ChildProcess) =>
  new Promise<number | string | null>((r) => child.on('close', (code, signal) => r(code ?? signal)));

describe('npm start (PGlite)', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-start-'));
  afterAll(() => {
    // a failed assertion must not leave a service running
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('the first start seeds and prints the demo credentials once; SIGTERM exits 0', async () => {
    const first = start(dataDir);
    const url = await first.url;
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo-credentials.json'), 'utf8'));
    const out1 = first.output();
    expect(out1).toMatch(/OCPP:\s+ws:\/\/\S+\/ocpp\/<identity>/);
    expect(out1).toContain(demo.partner.api_key);
    expect(out1).toContain(demo.user.token);
    expect(out1).toContain(demo.charger.ocpp_password);
    // the secrets appear once: in the banner, never in a JSON log line
    for (const line of out1.split('\n').filter((l) => l.startsWith('{'))) {
      expect(line).not.toContain(demo.partner.api_key);
      expect(line).not.toContain(demo.partner.cpo_client.client_secret);
    }
    first.child.kill('SIGTERM');
    expect(await exitCode(first.child)).toBe(0);
    expect(first.output()).toContain('shutting down');
    // a second start on this data dir does not seed again: test/platform/seed.test.ts (in process, cheaper)
  }, 120_000);
});
