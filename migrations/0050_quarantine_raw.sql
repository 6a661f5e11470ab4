-- C4.11: the quarantine keeps the raw inbound frame as text (jsonb cannot hold \u0000), the parts of a message
-- that were set aside while the rest was applied, the acknowledgement that was sent, and the replay outcome.
alter table ocpp_quarantine alter column payload drop not null;
alter table ocpp_quarantine add column raw text;
-- 'message': the whole message was acknowledged and kept; 'part': one unreadable piece of an applied message
alter table ocpp_quarantine add column kind text not null default 'message' check (kind in ('message', 'part'));
-- what the charger was answered (a 1.6 StartTransaction's transactionId): a replay reuses it
alter table ocpp_quarantine add column ack jsonb;
alter table ocpp_quarantine add column replayed_at timestamptz;
alter table ocpp_quarantine add column replay_result text check (replay_result in ('applied', 'unusable'));
alter table ocpp_quarantine add column replay_reason text;
-- a resent message sets the same part aside once
create unique index ocpp_quarantine_part_once on ocpp_quarantine (charger_id, action, md5(raw)) where kind = 'part';
