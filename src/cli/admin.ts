// npm run admin -- <command>: a CLI over the HTTP admin API (C1.6). It talks to a running service:
// base URL from ADMIN_URL (else PUBLIC_BASE_URL, else http://localhost:$PORT), token from ADMIN_TOKEN.
// One command, reencrypt-data (D251), opens the database itself instead (reencrypt-data.ts).
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { reasonOf } from '../lib/start-failure.ts';

export const HELP = `Usage: npm run admin -- <command> [arguments]

Talks to the admin API of a running service (C1.6).
Environment: ADMIN_TOKEN (required), ADMIN_URL or PUBLIC_BASE_URL (default http://localhost:$PORT, 8080 without PORT).

Commands:
  create-partner --name <name> [--rolling-days N] [--rolling-cap N]
                                            POST /admin/partners
  mint-partner-key <partner_id> [--legacy-prefix]
                                            POST /admin/partners/:partner_id/api-keys (revokes the earlier key)
  create-cpo-client <partner_id> [--scopes a,b]
                                            POST /admin/partners/:partner_id/cpo-clients
  revoke-cpo-client <client_id>             POST /admin/cpo-clients/:client_id/revoke (the client and its tokens)
  create-user --email <email> [--full-name <name>]
                                            POST /admin/users
  mint-user-token <user_id> --scopes chargers:read,chargers:write
                                            POST /admin/users/:user_id/api-tokens (revokes the earlier token)
  link-account <user_id> <account_id>       POST /admin/users/:user_id/accounts
  list-jobs                                 GET /admin/jobs (crons, running now, last run)
  run-job <job>                             POST /admin/jobs/:job/run (e.g. energy-aggregate, ean-recheck)
  quarantine <charger_id> [--limit N]       GET /admin/chargers/:charger_id/quarantine (raw frames, reasons, replays)
  replay-quarantine <charger_id> <id>       POST /admin/chargers/:charger_id/quarantine/:id/replay (after a fix)
  held-sessions [--limit N]                 GET /admin/sessions/held (sessions whose flagged steps wait for review)
  review-session <session_id> accept|reject POST /admin/sessions/:session_id/review (accepted Wh count from now
                                            on, rejected Wh never; the monthly energy follows at the next
                                            energy-aggregate run)
  register-charger <user_id> --nickname <name> [--identity <id>] [--account <account_id>] [--password-file <file>]
                                            POST /admin/users/:user_id/chargers (an imported charger keeps the
                                            password in the file; otherwise one is generated and shown once)
  set-charger-password <charger_id> --password-file <file>
                                            PUT /admin/chargers/:charger_id/password
  rotate-charger-password <charger_id> [--password-file <file>] [--encoding hex|plain]
                                            POST /admin/chargers/:charger_id/password/rotate (sends it to the
                                            charger over OCPP; the new password is shown once; exit 1 when the
                                            charger refuses it)
  set-ocmf-key <charger_id> (--key <hex|base64> | --key-file <file> | --clear) [--curve <name>]
                                            PUT /admin/chargers/:charger_id/ocmf-public-key (the signing meter's
                                            public key: DER hex/base64, PEM in a file, or a point with --curve)
  command <charger_id> <Action> [json]      POST /admin/chargers/:charger_id/commands (C6.6: 1.6 Reset,
                                            TriggerMessage, ChangeConfiguration, GetConfiguration,
                                            RemoteStartTransaction, RemoteStopTransaction; 2.0.1 Reset,
                                            TriggerMessage, SetVariables, GetVariables, RequestStartTransaction,
                                            RequestStopTransaction; the payload as JSON)
  remote-start <charger_id> --id-tag <tag> [--connector N]
                                            1.6 RemoteStartTransaction (connector default 1)
  request-start <charger_id> --id-token <token> [--type Central] [--evse N] [--remote-start-id N]
                                            2.0.1 RequestStartTransaction (EVSE default 1, type default Central)
  remote-stop <charger_id> <transaction_id> 1.6 RemoteStopTransaction (the integer transactionId)
  request-stop <charger_id> <transaction_id>
                                            2.0.1 RequestStopTransaction
  reencrypt-data [--check] [--batch-size N]
                                            D251, a key rotation's step 3; not over the admin API: opens
                                            DATABASE_URL (or DATA_DIR's PGlite, service stopped) with this
                                            shell's DATA_ENCRYPTION_KEY and DATA_ENCRYPTION_KEYS_PREVIOUS, writes
                                            every IBAN and mandate-link token again under the current key (batches
                                            of N, default 200; resumable, safe beside the running service) and
                                            prints the counts; exit 0 once nothing needs a previous key (then drop
                                            it), 1 with unreadable rows (named) or data still under an old key.
                                            --check counts and writes nothing (exit 1 only for unreadable rows)
  request <METHOD> <PATH> [json]            any admin request, e.g.
                                            request POST /admin/catalog/models '{"brand":"X","model":"Y","mid_meter":true}'
                                            request GET /admin/outbox
  --help                                    this text

The response body is printed as JSON. Exit code: 0 for a 2xx answer (and --help); 1 for any other answer, a
service that cannot be reached, or no command; 2 for a usage error or ADMIN_TOKEN unset (nothing was sent).`;

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  fetch?: typeof fetch;
}

type Parsed = { positional: string[]; flags: Record<string, string | true> };

function parseArgs(args: string[]): Parsed {
  const positional: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith('--')) {
      const [k, v] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      if (v !== undefined) flags[k] = v;
      else if (args[i + 1] !== undefined && !args[i + 1]!.startsWith('--')) flags[k] = args[++i]!;
      else flags[k] = true;
    } else positional.push(a);
  }
  return { positional, flags };
}

class UsageError extends Error {}

function need<T>(v: T | undefined | true, what: string): T {
  if (v === undefined || v === true || v === '') throw new UsageError(`missing ${what}`);
  return v;
}

const list = (v: string | true | undefined) => (typeof v === 'string' ? v.split(/[\s,]+/).filter(Boolean) : undefined);
const int = (v: string | true | undefined, what: string) => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new UsageError(`${what} must be an integer`);
  return n;
};
const seg = (s: string) => encodeURIComponent(s);
/** A charger password comes from a file, never the command line (shell history, ps); one trailing newline dropped. */
const passwordFrom = (file: string | true | undefined) => {
  if (file === undefined) return undefined;
  if (file === true || file === '') throw new UsageError('missing --password-file');
  try {
    return fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch {
    throw new UsageError(`cannot read --password-file ${file}`);
  }
};

const commandRequest = (chargerId: string, action: string, payload: unknown) => ({
  method: 'POST',
  path: `/admin/chargers/${seg(chargerId)}/commands`,
  body: { action, payload },
});

/** Maps a command to the admin request it makes. */
export function toRequest(argv: string[]): { method: string; path: string; body?: unknown } {
  const [command, ...rest] = argv;
  const { positional: p, flags: f } = parseArgs(rest);
  switch (command) {
    case 'create-partner':
      return {
        method: 'POST',
        path: '/admin/partners',
        body: { name: need(f['name'] ?? p[0], '--name'), rolling_days: int(f['rolling-days'], '--rolling-days'), rolling_cap: int(f['rolling-cap'], '--rolling-cap') },
      };
    case 'mint-partner-key':
      return { method: 'POST', path: `/admin/partners/${seg(need(p[0], 'partner_id'))}/api-keys`, body: { legacy_prefix: f['legacy-prefix'] === true || f['legacy-prefix'] === 'true' } };
    case 'create-cpo-client':
      return { method: 'POST', path: `/admin/partners/${seg(need(p[0], 'partner_id'))}/cpo-clients`, body: { scopes: list(f['scopes']) } };
    case 'revoke-cpo-client':
      return { method: 'POST', path: `/admin/cpo-clients/${seg(need(p[0], 'client_id'))}/revoke` };
    case 'create-user':
      return { method: 'POST', path: '/admin/users', body: { email: need(f['email'] ?? p[0], '--email'), full_name: typeof f['full-name'] === 'string' ? f['full-name'] : undefined } };
    case 'mint-user-token':
      return { method: 'POST', path: `/admin/users/${seg(need(p[0], 'user_id'))}/api-tokens`, body: { scopes: need(list(f['scopes']), '--scopes') } };
    case 'link-account':
      return { method: 'POST', path: `/admin/users/${seg(need(p[0], 'user_id'))}/accounts`, body: { account_id: need(p[1], 'account_id') } };
    case 'list-jobs':
      return { method: 'GET', path: '/admin/jobs' };
    case 'run-job':
      return { method: 'POST', path: `/admin/jobs/${seg(need(p[0], 'job'))}/run` };
    case 'quarantine': {
      const limit = int(f['limit'], '--limit');
      return { method: 'GET', path: `/admin/chargers/${seg(need(p[0], 'charger_id'))}/quarantine${limit !== undefined ? `?limit=${limit}` : ''}` };
    }
    case 'replay-quarantine':
      return { method: 'POST', path: `/admin/chargers/${seg(need(p[0], 'charger_id'))}/quarantine/${seg(need(p[1], 'id'))}/replay` };
    case 'held-sessions': {
      const limit = int(f['limit'], '--limit');
      return { method: 'GET', path: `/admin/sessions/held${limit !== undefined ? `?limit=${limit}` : ''}` };
    }
    case 'review-session': {
      const decision = need(p[1] ?? f['decision'], 'accept or reject');
      if (decision !== 'accept' && decision !== 'reject') throw new UsageError('the decision is accept or reject');
      return { method: 'POST', path: `/admin/sessions/${seg(need(p[0], 'session_id'))}/review`, body: { decision } };
    }
    case 'register-charger':
      return {
        method: 'POST',
        path: `/admin/users/${seg(need(p[0], 'user_id'))}/chargers`,
        body: {
          nickname: need(f['nickname'], '--nickname'),
          ocpp_identity: typeof f['identity'] === 'string' ? f['identity'] : undefined,
          account_id: typeof f['account'] === 'string' ? f['account'] : undefined,
          password: passwordFrom(f['password-file']),
        },
      };
    case 'set-charger-password':
      return {
        method: 'PUT',
        path: `/admin/chargers/${seg(need(p[0], 'charger_id'))}/password`,
        body: { password: passwordFrom(need(f['password-file'], '--password-file')) },
      };
    case 'rotate-charger-password':
      return {
        method: 'POST',
        path: `/admin/chargers/${seg(need(p[0], 'charger_id'))}/password/rotate`,
        body: { password: passwordFrom(f['password-file']), authorization_key_encoding: typeof f['encoding'] === 'string' ? f['encoding'] : undefined },
      };
    case 'set-ocmf-key': {
      const clear = f['clear'] === true || f['clear'] === 'true';
      const file = f['key-file'];
      let key: string | null = null;
      if (!clear) {
        if (typeof file === 'string') {
          try {
            key = fs.readFileSync(file, 'utf8').trim();
          } catch {
            throw new UsageError(`cannot read --key-file ${file}`);
          }
        } else key = need(f['key'], '--key, --key-file or --clear');
      }
      return {
        method: 'PUT',
        path: `/admin/chargers/${seg(need(p[0], 'charger_id'))}/ocmf-public-key`,
        body: { public_key: key, ...(typeof f['curve'] === 'string' ? { curve: f['curve'] } : {}) },
      };
    }
    case 'command': {
      let payload: unknown = {};
      if (p[2] !== undefined) {
        try {
          payload = JSON.parse(p[2]);
        } catch {
          throw new UsageError('the payload must be JSON');
        }
      }
      return commandRequest(need(p[0], 'charger_id'), need(p[1], 'Action'), payload);
    }
    case 'remote-start':
      return commandRequest(need(p[0], 'charger_id'), 'RemoteStartTransaction', {
        connectorId: int(f['connector'], '--connector') ?? 1,
        idTag: need(f['id-tag'], '--id-tag'),
      });
    case 'request-start': {
      const remoteStartId = int(f['remote-start-id'], '--remote-start-id') ?? Math.floor(Date.now() / 1000) % 2_000_000_000;
      return commandRequest(need(p[0], 'charger_id'), 'RequestStartTransaction', {
        evseId: int(f['evse'], '--evse') ?? 1,
        idToken: { idToken: need(f['id-token'], '--id-token'), type: typeof f['type'] === 'string' ? f['type'] : 'Central' },
        remoteStartId,
      });
    }
    case 'remote-stop': {
      const tx = int(need(p[1], 'transaction_id'), 'transaction_id');
      return commandRequest(need(p[0], 'charger_id'), 'RemoteStopTransaction', { transactionId: tx });
    }
    case 'request-stop':
      return commandRequest(need(p[0], 'charger_id'), 'RequestStopTransaction', { transactionId: need(p[1], 'transaction_id') });
    case 'request': {
      const method = need(p[0], 'METHOD').toUpperCase();
      const path = need(p[1], 'PATH');
      if (!path.startsWith('/admin')) throw new UsageError('PATH must start with /admin');
      let body: unknown;
      if (p[2] !== undefined) {
        try {
          body = JSON.parse(p[2]);
        } catch {
          throw new UsageError('the body must be JSON');
        }
      }
      return { method, path, ...(body !== undefined ? { body } : {}) };
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

export function adminBaseUrl(env: Record<string, string | undefined>): string {
  const url = env.ADMIN_URL?.trim() || env.PUBLIC_BASE_URL?.trim() || `http://localhost:${env.PORT?.trim() || '8080'}`;
  return url.replace(/\/+$/, '');
}

/** Runs one CLI invocation; returns the exit code. */
export async function runAdminCli(argv: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h') || argv[0] === 'help') {
    io.out(HELP);
    return argv.length === 0 ? 1 : 0;
  }
  // D251: works on the database itself, with the keys of this environment (no ADMIN_TOKEN, nothing sent)
  if (argv[0] === 'reencrypt-data') {
    const { runReencryptData } = await import('./reencrypt-data.ts');
    return runReencryptData(argv.slice(1), env, io);
  }
  let req: ReturnType<typeof toRequest>;
  try {
    req = toRequest(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`admin: ${err.message}\nRun "npm run admin -- --help" for the commands.`);
      return 2;
    }
    throw err;
  }
  const token = env.ADMIN_TOKEN?.trim();
  if (!token) {
    io.err('admin: ADMIN_TOKEN is not set (the admin API is disabled without it)');
    return 2;
  }
  const url = adminBaseUrl(env) + req.path;
  const doFetch = io.fetch ?? fetch;
  let res: Response;
  try {
    res = await doFetch(url, {
      method: req.method,
      headers: { authorization: `Bearer ${token}`, ...(req.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
    });
  } catch (err) {
    io.err(`admin: cannot reach ${url}: ${unreachableReason(err)}`);
    return 1;
  }
  const text = await res.text();
  let shown = text;
  try {
    shown = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // not JSON: print as is
  }
  if (!res.ok) {
    io.err(`admin: ${req.method} ${req.path} → ${res.status}\n${shown}`);
    return 1;
  }
  io.out(shown);
  // D165: a rotation the charger refused is an answer (200, the charger's own), but the password did not change
  if (notRotated(text)) {
    io.err('admin: the charger refused the new password (rotated: false); its old password stays valid');
    return 1;
  }
  return 0;
}

/**
 * D190: why a request never got an answer. fetch says only "fetch failed"; the reason is its cause (ECONNREFUSED,
 * ENOTFOUND, a certificate the CLI does not trust), and a certificate error says how to trust the service's own.
 */
export function unreachableReason(err: unknown): string {
  const cause = (err as { cause?: unknown } | null)?.cause;
  const reason = cause ? reasonOf(cause) : reasonOf(err);
  const code = String((cause as { code?: unknown } | null)?.code ?? '');
  const certificate = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(code);
  return certificate
    ? `${reason}; to trust the service's own certificate, run with NODE_EXTRA_CA_CERTS=<its TLS_CERT_FILE> (the name in ADMIN_URL must be one the certificate names)`
    : reason;
}

function notRotated(text: string): boolean {
  try {
    return (JSON.parse(text) as { rotated?: unknown }).rotated === false;
  } catch {
    return false;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runAdminCli(process.argv.slice(2), process.env, {
    out: (t) => process.stdout.write(t + '\n'),
    err: (t) => process.stderr.write(t + '\n'),
  }).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`admin: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
