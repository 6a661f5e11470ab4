-- C5.5 signed meter values verified (issue 12 item 4).
--   meter_readings.signature_status  the verdict on the reading's signed meter value (OCMF): verified (the
--                                    signature holds with the meter's key and signs this reading), unverified (no
--                                    key known, or a format other than OCMF), invalid (a bad signature, an
--                                    unreadable record, or a record that does not sign this reading's value).
--                                    null = no signed value; rows signed before this migration stay null and read
--                                    as unverified (they were never checked).
--   chargers.ocmf_public_key         the public key an operator registered for the charger's signing meter (DER
--                                    SubjectPublicKeyInfo, upper-case hex); when set it is the key, and a record
--                                    signed with another key is invalid.
-- meter_readings is partitioned: the column, its check and the index reach every partition.
alter table meter_readings
  add column signature_status text null check (signature_status in ('verified', 'unverified', 'invalid'));

alter table chargers add column ocmf_public_key text null;

-- the sessions held for an invalid signature (review reason invalid_signature) are found through this small index
create index meter_readings_invalid_signature on meter_readings(session_id) where signature_status = 'invalid';
