-- Which environment (APP_ENV) this database belongs to (C0.1: sandbox and production never share a database). The
-- first process to start records its APP_ENV; every later start compares, and a process of the other environment
-- refuses to start (a sandbox process on a production database would let a CPO sign a customer's mandate through
-- /sandbox; a production process on a sandbox database would accept the published demo credentials). A database from
-- before this migration takes the environment of the first process that starts on it. One row. D186.
create table database_environment (
  id boolean primary key default true check (id),
  app_env text not null check (app_env in ('sandbox', 'production')),
  recorded_at timestamptz not null default now()
);
