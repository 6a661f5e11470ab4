-- C7.2 the user dashboard: sign-in by a one-time e-mail link (15 minutes, single use, only its hash stored), then a
-- session cookie (30 days, only its hash stored, revoked on sign-out) with the session's CSRF token. Personal API
-- tokens made on the dashboard carry a name, a hint (the last characters of the secret) and when they were last used.
create table dashboard_sign_in_links (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users(id) on delete cascade,
  token_hash text not null unique,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index dashboard_sign_in_links_user on dashboard_sign_in_links(user_id, created_at);

create table dashboard_sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users(id) on delete cascade,
  token_hash text not null unique,
  csrf_token text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create index dashboard_sessions_user on dashboard_sessions(user_id);

alter table personal_tokens
  add column name text,
  add column hint text,
  add column last_used_at timestamptz;
