-- The operator's reads of the ERE ledger and the quarantine across the fleet (docs/decisions.md, D166–D167):
-- a payout's allocations are found by payout (the list of payouts and a replayed payout read them), and the
-- fleet's quarantine is read newest first without visiting every charger's rows.
create index ere_allocations_payout on ere_allocations(payout_id) where payout_id is not null;
create index ocpp_quarantine_received on ocpp_quarantine(received_at desc, id desc);
