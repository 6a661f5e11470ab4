-- Which data-encryption key this database's secrets (IBANs, mandate links) are encrypted with: an HMAC of a fixed
-- label under the key, never the key itself. The first process to start records its key's check; every later start
-- compares, and a process with another key refuses to start instead of answering 500 on every encrypted value
-- (two sandbox processes with their own generated key files, or two machines configured with different keys).
-- One row. docs/decisions.md, D153.
create table data_key_check (
  id boolean primary key default true check (id),
  key_check text not null,
  recorded_at timestamptz not null default now()
);
