-- D235: a CPO access token (one row per POST /oauth/token, an hour's life) is deleted a day after it expired by the
-- nightly retention job, which finds those rows by expiry; before, nothing deleted one and the table grew by up to
-- 43,200 rows a day per client at the token rate limit. Revoking a CPO client (D128) finds the client's tokens not
-- yet revoked through the second index instead of reading the whole table.
create index access_tokens_expires on access_tokens(expires_at);
create index access_tokens_client_unrevoked on access_tokens(cpo_client_id) where revoked_at is null;
