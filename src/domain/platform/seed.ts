// C1.7 first start of a sandbox: a demo partner with a partner key and a CPO client, a demo user with a
// personal token, and one registered demo OCPP charger. Runs only on an empty database (no partners, no
// users), under a lock so two processes starting at once seed once. The secrets are returned to the caller
// (main.ts prints them once and writes DATA_DIR/demo-credentials.json); they never reach a log line.
// The bundled MID catalog is loaded by startService for both environments, not here.
import fs from 'node:fs';
import path from 'node:path';
import type { Deps } from '../../deps.ts';
import { withAdvisoryLock } from '../../db/locks.ts';
import { hashSecret } from '../../lib/secrets.ts';
import {
  createCpoClient,
  createPartner,
  createUser,
  mintPartnerApiKey,
  mintPersonalToken,
} from '../credentials/tokens.ts';
import { generateChargerPassword } from '../chargers/passwords.ts';

export const DEMO_CHARGER_IDENTITY = 'DEMO-CP-1';
export const DEMO_USER_EMAIL = 'demo@ere-gateway.local';
export const DEMO_CREDENTIALS_FILE = 'demo-credentials.json';

export interface DemoCredentials {
  environment: 'sandbox';
  base_url: string;
  token_url: string;
  partner: {
    partner_id: string;
    name: string;
    api_key: string;
    cpo_client: { client_id: string; client_secret: string; scopes: string[] };
  };
  user: { user_id: string; email: string; token: string; scopes: string[] };
  charger: { charger_id: string; nickname: string; ocpp_identity: string; ocpp_password: string; ocpp_endpoint: string };
}

/** Seeds an empty sandbox database; returns the demo credentials, or null when there was nothing to do. */
export async function seedSandbox(deps: Deps): Promise<DemoCredentials | null> {
  if (deps.config.APP_ENV !== 'sandbox') return null; // C1.7: production never seeds credentials
  const r = await withAdvisoryLock(deps.db, deps.dbKind, 'seed-sandbox', () => seedIfEmpty(deps), { wait: true });
  return r.acquired ? r.value : null;
}

async function seedIfEmpty(deps: Deps): Promise<DemoCredentials | null> {
  const [partners, users] = await Promise.all([
    deps.db.selectFrom('partners').select('id').limit(1).execute(),
    deps.db.selectFrom('users').select('id').limit(1).execute(),
  ]);
  if (partners.length || users.length) return null;

  const base = deps.config.PUBLIC_BASE_URL;
  const partner = await createPartner(deps, { name: 'Demo CPO partner' });
  const { api_key } = await mintPartnerApiKey(deps, partner.partner_id);
  const client = await createCpoClient(deps, partner.partner_id);
  const userScopes = ['chargers:read', 'chargers:write'];
  const { user_id } = await createUser(deps, { email: DEMO_USER_EMAIL, full_name: 'Demo Owner' });
  const { token } = await mintPersonalToken(deps, user_id, userScopes);

  const password = generateChargerPassword();
  const nickname = 'Demo charger';
  const charger = await deps.db
    .insertInto('chargers')
    .values({
      owner_user_id: user_id,
      nickname,
      connection_type: 'ocpp',
      ocpp_identity: DEMO_CHARGER_IDENTITY,
      password_hash: hashSecret(password),
    })
    .returning('id')
    .executeTakeFirstOrThrow();

  return {
    environment: 'sandbox',
    base_url: base,
    token_url: `${base}/oauth/token`,
    partner: { ...partner, api_key, cpo_client: client },
    user: { user_id, email: DEMO_USER_EMAIL, token, scopes: userScopes },
    charger: {
      charger_id: charger.id,
      nickname,
      ocpp_identity: DEMO_CHARGER_IDENTITY,
      ocpp_password: password,
      ocpp_endpoint: `${base.replace(/^http/, 'ws')}/ocpp/${DEMO_CHARGER_IDENTITY}`,
    },
  };
}

/** Writes the demo credentials next to the data (mode 0600); returns the file's path. */
export function writeDemoCredentials(dataDir: string, demo: DemoCredentials): string {
  const file = path.resolve(dataDir, DEMO_CREDENTIALS_FILE);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(demo, null, 2) + '\n', { mode: 0o600 });
  return file;
}

/** The banner main.ts prints once, at the first start. */
export function formatDemoCredentials(demo: DemoCredentials, file: string): string {
  return [
    '  Demo credentials (shown once; also in ' + file + '):',
    `    partner API key:   ${demo.partner.api_key}`,
    `    CPO client:        client_id=${demo.partner.cpo_client.client_id}`,
    `                       client_secret=${demo.partner.cpo_client.client_secret}`,
    `                       token: POST ${demo.token_url}`,
    `    personal token:    ${demo.user.token}   (${demo.user.scopes.join(' ')})`,
    `    OCPP charger:      ${demo.charger.ocpp_endpoint}`,
    `                       identity=${demo.charger.ocpp_identity} password=${demo.charger.ocpp_password}`,
    '',
  ].join('\n');
}
