// The names a generated client uses: one operationId per operation, stable (renaming one breaks every client
// built from the document), and the tags in the order a reader meets the API. Keyed by method and OpenAPI path;
// a route missing here gets a derived id (test/http/openapi.test.ts asserts that none is missing).

/** Tags in reading order: the spec's parts first, the HTML pages of customers, then operations and admin. */
export const TAGS = [
  { name: 'CPO API', description: 'The integrated API for charge-point operators: OAuth 2.0 client-credentials token, accounts, machtiging links, chargers, monthly kWh, ERE positions.' },
  { name: 'Partner API', description: 'Bulk upload of customers as claimable drafts, with a partner API key.' },
  { name: 'Personal API', description: 'An owner’s chargers, sessions, energy and ERE position, with a personal API token.' },
  { name: 'Sandbox helpers', description: 'Test helpers, on the sandbox only: sign a machtiging as the customer would, register a month as ERE, run the EAN re-check.' },
  { name: 'Signing page', description: 'The hosted machtiging page a customer opens from a signing link (HTML).' },
  { name: 'Claim page', description: 'The page a customer opens from a partner invite (HTML).' },
  { name: 'Operations', description: 'Health, readiness and metrics.' },
  { name: 'Admin', description: 'The operator’s API (only when ADMIN_TOKEN is set).' },
] as const;

export type TagName = (typeof TAGS)[number]['name'];

/** Routes whose own tag is not where a reader looks for them. */
export const TAG_OVERRIDES: Record<string, TagName> = {
  // spec §5 "CPO token": the first step of the CPO lifecycle
  'POST /oauth/token': 'CPO API',
};

export const OPERATION_IDS: Record<string, string> = {
  // CPO API
  'POST /oauth/token': 'createToken',
  'POST /v1/accounts': 'createAccount',
  'GET /v1/accounts': 'listAccounts',
  'POST /v1/connections:update': 'updateConnection',
  'POST /v1/mandate-links': 'createMandateLink',
  'POST /v1/chargers': 'registerCharger',
  'GET /v1/catalog/chargers/resolve': 'resolveCatalogCharger',
  'GET /v1/catalog/chargers': 'listCatalogChargers',
  'POST /v1/sessions:batch': 'deliverSessionsBatch',
  'GET /v1/ere-positions': 'listErePositions',
  // Partner API
  'POST /partner/customers': 'uploadPartnerCustomers',
  'POST /partner/drafts/import': 'importPartnerDrafts',
  // Personal API
  'GET /chargers': 'listMyChargers',
  'GET /chargers/stream': 'streamMyChargers',
  'POST /chargers': 'registerMyCharger',
  'GET /sessions': 'listMySessions',
  'GET /energy': 'getMyEnergy',
  'GET /ere-position': 'getMyErePosition',
  // Sandbox helpers
  'POST /sandbox/connections/{connection_id}/sign-mandate': 'sandboxSignMandate',
  'POST /sandbox/connections/{connection_id}/register-ere': 'sandboxRegisterEre',
  'POST /sandbox/ean-recheck': 'sandboxRunEanRecheck',
  // pages
  'GET /mandates/{token}': 'getSigningPage',
  'POST /mandates/{token}': 'signMandate',
  'GET /claim/{token}': 'getClaimPage',
  'POST /claim/{token}': 'claimDraft',
  'GET /unsubscribe/{token}': 'getUnsubscribePage',
  'POST /unsubscribe/{token}': 'unsubscribe',
  // Operations
  'GET /healthz': 'getHealth',
  'GET /readyz': 'getReadiness',
  'GET /metrics': 'getMetrics',
  // Admin
  'POST /admin/partners': 'adminCreatePartner',
  'POST /admin/partners/{partner_id}/api-keys': 'adminMintPartnerApiKey',
  'POST /admin/partners/{partner_id}/cpo-clients': 'adminCreateCpoClient',
  'POST /admin/cpo-clients/{client_id}/revoke': 'adminRevokeCpoClient',
  'POST /admin/users': 'adminCreateUser',
  'POST /admin/users/{user_id}/api-tokens': 'adminMintPersonalToken',
  'POST /admin/users/{user_id}/accounts': 'adminLinkAccountToUser',
  'POST /admin/users/{user_id}/chargers': 'adminRegisterUserCharger',
  'GET /admin/jobs': 'adminListJobs',
  'POST /admin/jobs/{job}/run': 'adminRunJob',
  'POST /admin/catalog/models': 'adminUpsertCatalogModel',
  'POST /admin/ean-register': 'adminLoadEanRegister',
  'POST /admin/chargers/{charger_id}/commands': 'adminSendChargerCommand',
  'PUT /admin/chargers/{charger_id}/registration': 'adminSetChargerRegistration',
  'GET /admin/chargers/{charger_id}/registration': 'adminGetChargerRegistration',
  'PUT /admin/chargers/{charger_id}/id-tokens': 'adminSetChargerIdTokens',
  'GET /admin/chargers/{charger_id}/id-tokens': 'adminGetChargerIdTokens',
  'PUT /admin/chargers/{charger_id}/ocmf-public-key': 'adminSetChargerOcmfKey',
  'GET /admin/chargers/{charger_id}/ocmf-public-key': 'adminGetChargerOcmfKey',
  'GET /admin/chargers/{charger_id}/quarantine': 'adminListChargerQuarantine',
  'POST /admin/chargers/{charger_id}/quarantine/{id}/replay': 'adminReplayQuarantined',
  'PUT /admin/chargers/{charger_id}/password': 'adminSetChargerPassword',
  'POST /admin/chargers/{charger_id}/password/rotate': 'adminRotateChargerPassword',
  'GET /admin/sessions/held': 'adminListHeldSessions',
  'POST /admin/sessions/{session_id}/review': 'adminReviewSession',
  'POST /admin/referral-codes': 'adminAddReferralCodes',
  'POST /admin/suppressions': 'adminAddSuppression',
  'GET /admin/suppressions': 'adminListSuppressions',
  'DELETE /admin/suppressions/{email}': 'adminRemoveSuppression',
  'GET /admin/outbox': 'adminListOutbox',
  'POST /admin/outbox/{id}/requeue': 'adminRequeueOutboxMessage',
  'GET /admin/energy-months': 'adminListEnergyMonths',
  'POST /admin/energy-months/{id}/review': 'adminReviewEnergyMonth',
  'POST /admin/ere/sales': 'adminCreateEreSale',
  'GET /admin/ere/sales': 'adminListEreSales',
  'POST /admin/ere/sales/{sale_id}/allocations': 'adminAllocateEre',
  'POST /admin/ere/allocations/{allocation_id}/payable': 'adminMarkAllocationPayable',
  'POST /admin/ere/payouts': 'adminCreatePayout',
  'GET /admin/ere/payouts': 'adminListPayouts',
  'GET /admin/ere/allocations': 'adminListAllocations',
  'GET /admin/quarantine': 'adminListQuarantine',
};

/** '/v1/sessions::batch' and '/admin/users/:user_id' as fastify registers them → their OpenAPI paths. */
export function openApiPath(url: string): string {
  return url.replace(/\/:([A-Za-z_]\w*)/g, '/{$1}').replace(/::/g, ':');
}

/** The operationId of a route: from the table, else derived (postAdminUsersUserIdChargers). */
export function operationIdFor(method: string, path: string): string {
  const listed = OPERATION_IDS[`${method} ${path}`];
  if (listed) return listed;
  const words = [method.toLowerCase(), ...path.split(/[^A-Za-z0-9]+/).filter(Boolean)];
  return words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('');
}
