// issue 13 item 6: `npm install` on Node 20 prints no engine warnings. npm checks every locked package's
// `engines` against the running Node while it plans the install; a dry run of `npm ci` on a copy of package.json
// and package-lock.json does that planning without touching node_modules (under a second, no network).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-engines-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

const version = (v: string) => v.replace(/^v/, '').split('.').map(Number) as [number, number, number];
const atLeast = (a: number[], b: number[]) => (a[0]! - b[0]!) * 1e6 + (a[1]! - b[1]!) * 1e3 + (a[2]! - b[2]!) >= 0;

describe('engines', () => {
  it('package.json states the Node it needs (20.19: vite 8 under vitest), and this Node has it', () => {
    expect(pkg.engines.node).toBe('>=20.19');
    expect(atLeast(version(process.version), [20, 19, 0])).toBe(true);
  });

  it('no locked package declares an engine this Node does not satisfy (npm ci --dry-run: no EBADENGINE)', () => {
    fs.copyFileSync(path.join(root, 'package.json'), path.join(work, 'package.json'));
    fs.copyFileSync(path.join(root, 'package-lock.json'), path.join(work, 'package-lock.json'));
    const run = spawnSync('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, npm_config_loglevel: 'warn' },
      timeout: 60_000,
    });
    const out = `${run.stdout}\n${run.stderr}`;
    expect(run.status, out).toBe(0);
    const offenders = [...out.matchAll(/EBADENGINE\s+package: '([^']+)'/g)].map((m) => m[1]);
    expect(offenders, out).toEqual([]);
  });
});
