-- C7.1 the push stream GET /chargers/stream: the open streams of every process, so the cap per personal token
-- (STREAM_MAX_PER_TOKEN) holds across processes. A process inserts a row when a stream opens (under an advisory
-- lock per token, after counting the token's live rows), deletes it when the stream ends, and renews the rows of
-- its open streams every keep-alive tick; a killed process's rows stop counting once they expire (database clock).
create table charger_streams (
  id uuid primary key default gen_random_uuid(),
  token_id uuid not null,
  opened_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index charger_streams_token on charger_streams(token_id, expires_at);
