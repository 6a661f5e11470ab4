-- The data-encryption keys this database's secrets (IBANs, mandate-link tokens) may be encrypted with, for key
-- rotation (D251): one row per key, a check of it (an HMAC of a fixed label under a key derived from it, as 0071's)
-- and its id (the fingerprint v2 ciphertexts name; never the key itself). Every start records its current key (it
-- will encrypt with it) and refuses to run without every key listed here, as its current or a previous key; the
-- re-encryption (npm run admin -- reencrypt-data) removes the keys nothing is encrypted with any more. Replaces 0071's
-- single check (D153), which becomes the first row; its key id is filled in by the first process that holds the key.
create table data_keys (
  key_check text primary key,
  key_id text,
  recorded_at timestamptz not null default now()
);
insert into data_keys (key_check, recorded_at) select key_check, recorded_at from data_key_check;
drop table data_key_check;
