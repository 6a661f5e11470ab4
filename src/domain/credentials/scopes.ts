// Scopes of spec §5 and C1.4.
export const CPO_SCOPES = ['cpo:accounts:write', 'cpo:accounts:read', 'cpo:chargers:write', 'cpo:sessions:write'] as const;
export const PERSONAL_SCOPES = ['chargers:read', 'chargers:write'] as const;
export type CpoScope = (typeof CPO_SCOPES)[number];
export type PersonalScope = (typeof PERSONAL_SCOPES)[number];
export type Scope = CpoScope | PersonalScope;

// Token formats: the prefix tells which table holds the hash. Partner key prefixes are spec §5's.
export const PREFIX = {
  partnerLive: 'pk_live_',
  partnerTest: 'pk_test_',
  cpoAccessToken: 'cat_',
  cpoClientId: 'cpo_',
  cpoClientSecret: 'cs_',
  personalToken: 'ptk_',
} as const;
