// C3.2: why an uploaded row was skipped (the per-reason counts of POST /partner/v1/customers:upload). One list, used
// by the response schema and by the domain that counts the rows.
export const SKIP_REASONS = [
  'invalid',
  'reserved_domain',
  'missing_kvk',
  'already_drafted',
  'existing_user',
  'suppressed',
  'conflict',
  'over_request_limit',
  'over_cap',
  'charger_brand_unsupported',
  'charger_not_linked',
  'charger_claimed',
] as const;
