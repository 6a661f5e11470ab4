// cpo_external_ref (spec §4.1): "trimmed to 120 characters". One normalisation for every route that takes it: the
// create (where it is the idempotency key), the GET /v1/accounts and GET /v1/ere-positions filters, and the
// addressing of POST /v1/connections:update, POST /v1/mandate-links and POST /v1/sessions:batch, so a reference
// sent as it was sent on create finds what the create stored.

export const MAX_EXTERNAL_REF = 120;

/** Trimmed, cut to 120 characters, trimmed again (a cut can leave a space at the end); '' when blank. */
export function normaliseExternalRef(v: string): string {
  return v.trim().slice(0, MAX_EXTERNAL_REF).trim();
}
