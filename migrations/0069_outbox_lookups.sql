-- The outbox is read by recipient (the operator's `GET /admin/outbox?to=`, and marking an address's queued mail
-- suppressed) and by draft (a claim page's confirmation e-mails, at most one per draft in 10 minutes, D129), and both
-- scanned every message ever queued: 50,000 messages took 19 ms a lookup in an outside audit, growing with the
-- outbox. docs/decisions.md, D140.
create index outbox_messages_to on outbox_messages(lower(to_email));
create index outbox_messages_draft on outbox_messages(draft_id, kind, created_at) where draft_id is not null;
