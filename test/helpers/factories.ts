// Small factories for the rows a test needs (ARCHITECTURE.md: tests on the real thing).
import type { Deps } from '../../src/deps.ts';
import {
  createCpoClient,
  createPartner,
  createUser,
  issueClientCredentialsToken,
  mintPartnerApiKey,
  mintPersonalToken,
} from '../../src/domain/credentials/tokens.ts';

export interface TestPartner {
  partnerId: string;
  apiKey: string;
  clientId: string;
  clientSecret: string;
  /** a fresh CPO access token with the client's scopes (or the given subset) */
  cpoToken(scopes?: string[]): Promise<string>;
}

let seq = 0;

export async function aPartner(
  deps: Deps,
  opts: { name?: string; scopes?: string[]; rolling_days?: number; rolling_cap?: number; legacyPrefix?: boolean } = {},
): Promise<TestPartner> {
  const { partner_id } = await createPartner(deps, {
    name: opts.name ?? `Partner ${++seq}`,
    rolling_days: opts.rolling_days,
    rolling_cap: opts.rolling_cap,
  });
  const { api_key } = await mintPartnerApiKey(deps, partner_id, { legacy_prefix: opts.legacyPrefix });
  const client = await createCpoClient(deps, partner_id, { scopes: opts.scopes });
  return {
    partnerId: partner_id,
    apiKey: api_key,
    clientId: client.client_id,
    clientSecret: client.client_secret,
    async cpoToken(scopes) {
      const t = await issueClientCredentialsToken(deps, {
        grant_type: 'client_credentials',
        client_id: client.client_id,
        client_secret: client.client_secret,
        ...(scopes ? { scope: scopes.join(' ') } : {}),
      });
      return t.access_token;
    },
  };
}

export async function aUser(
  deps: Deps,
  opts: { email?: string; full_name?: string; scopes?: string[] } = {},
): Promise<{ userId: string; token: string; email: string }> {
  const email = opts.email ?? `user${++seq}-${Date.now()}@ere-owner.nl`;
  const { user_id } = await createUser(deps, { email, full_name: opts.full_name ?? 'Test Owner' });
  const { token } = await mintPersonalToken(deps, user_id, opts.scopes ?? ['chargers:read', 'chargers:write']);
  return { userId: user_id, token, email };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
