// `npm start` as a process on embedded PGlite: it prints the base URL, the OCPP endpoint and (first start
// only) the demo credentials; /readyz answers; SIGTERM closes it with exit code 0.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';

let running: ServiceProcess | undefined;

describe('npm start (PGlite)', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-start-'));
  afterAll(() => {
    // a failed assertion must not leave a service running
    void running?.kill();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('the first start seeds and prints the demo credentials once; SIGTERM exits 0', async () => {
    const first = (running = await startServiceProcess({ DATA_DIR: dataDir, JOBS_ENABLED: 'false' }));
    const url = first.url;
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
    expect(await first.kill('SIGTERM')).toBe(0);
    expect(first.output()).toContain('shutting down');
    // a second start on this data dir does not seed again: test/service/seed.test.ts (in process, cheaper)
  }, 120_000);
});
