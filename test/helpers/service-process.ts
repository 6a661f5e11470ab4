// The service as a real child process (the run's compiled copy, D247, or the build's dist), for tests that must
// see the process itself: that it starts and stops cleanly, stays alive under hostile input, or what survives a SIGKILL. In-process tests use app.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { inject } from 'vitest';
import { RPCClient } from 'ocpp-rpc';
import type { RPC_ClientOptions } from 'ocpp-rpc/lib/client.js';

export interface ServiceProcess {
  child: ChildProcess;
  /** base URL (http://127.0.0.1:<port>, https with TLS files) printed by the service once it listens */
  url: string;
  /** everything the process wrote so far (stdout and stderr) */
  output(): string;
  /** true while the process has not exited */
  alive(): boolean;
  /** resolves with the exit code (or signal name) once the process has closed its output */
  exited: Promise<number | string | null>;
  /** SIGKILL (default) or another signal, and wait for the exit */
  kill(signal?: NodeJS.Signals): Promise<number | string | null>;
}

/**
 * D247: node's arguments to run one of the service's entry points (`src/main.ts`, `src/db/migrate-cli.ts`, …) as a
 * child: the run's compiled copy (global-setup.ts) with plain node, the same code as `npm run build` makes; the
 * sources through tsx (as `npm start`) where there is none. The quick-start test keeps `npm start`'s own command.
 */
export function nodeArgs(script: string): string[] {
  const dist = inject('serviceDist');
  if (dist && /^src\/[\w/.-]+\.ts$/.test(script)) return [path.join(dist, script.replace(/\.ts$/, '.js'))];
  return ['--import', 'tsx', script];
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});

/**
 * Starts the service with the given environment (PORT 0 and HOST 127.0.0.1 unless set) and resolves once it
 * printed its base URL. DATABASE_URL unset = PGlite in DATA_DIR.
 */
export async function startServiceProcess(
  env: Record<string, string | undefined>,
  timeoutMs = 90_000,
  /** what node runs (default the sources through tsx, as `npm start`; the build test runs dist) and where */
  command: { args?: string[]; cwd?: string } = {},
): Promise<ServiceProcess> {
  const full: Record<string, string> = { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) full[k] = v;
  const child = spawn(process.execPath, command.args ?? nodeArgs('src/main.ts'), {
    env: full,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(command.cwd ? { cwd: command.cwd } : {}),
  });
  running.add(child);
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | string | null>((r) =>
    child.on('close', (code, signal) => {
      running.delete(child);
      r(code ?? signal);
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start within ${timeoutMs} ms:\n${out}`)), timeoutMs);
    // the banner is looked for until it is found, then never again: a long run's output is hundreds of MB, and
    // scanning all of it on every chunk made the 30,000-case fuzz run quadratic
    const check = () => {
      const m = /API:\s+(https?:\/\/\S+)/.exec(out);
      if (m && /OCPP:/.test(out)) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${code}) before it listened:\n${out}`));
    });
  });
  return {
    child,
    url,
    output: () => out,
    alive: () => child.exitCode === null && child.signalCode === null,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * A charger registered by its owner through a running service (`POST /chargers` with the owner's personal token) and
 * connected to it over OCPP 1.6 as that charger (no reconnect, no schema checks of its own); `prepare` adds the
 * charger's handlers before it connects. Not booted: the caller sends its BootNotification.
 */
export async function connectOwnedCharger(
  serviceUrl: string,
  ownerToken: string,
  nickname: string,
  prepare?: (cli: RPCClient) => void,
): Promise<{ id: string; identity: string; cli: RPCClient }> {
  const res = await fetch(`${serviceUrl}/chargers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ownerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ nickname, connection_type: 'ocpp' }),
  });
  if (res.status !== 201) throw new Error(`POST /chargers answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { id: string; ocpp: { identity: string; password: string } };
  const opts: Partial<RPC_ClientOptions> = {
    endpoint: serviceUrl.replace(/^http/, 'ws') + '/ocpp',
    identity: body.ocpp.identity,
    password: body.ocpp.password,
    protocols: ['ocpp1.6'],
    reconnect: false,
    strictMode: false,
  };
  const cli = new RPCClient(opts as RPC_ClientOptions);
  prepare?.(cli);
  await cli.connect();
  return { id: body.id, identity: body.ocpp.identity, cli };
}
