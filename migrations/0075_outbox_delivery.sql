-- The outbox after an outside audit of e-mail (docs/decisions.md, D168–D172):
-- a message being handed to the SMTP server is `sending` (claimed before the send, `sent` in the step after it), so a
-- restart never sends again a message the server may have accepted (D169);
-- `failed_at` says when a message failed for good (a failed message can be requeued until its links are erased, D170/D172);
-- `links_erased_at` says when the secret part of its links (claim, sign-in, confirm, unsubscribe) was taken out of the
-- stored body (D172); the suppression list records who added an entry (`link`: its owner through the unsubscribe link,
-- `operator`: POST /admin/suppressions, `delivery`: a bounce; null: added before this migration), D171.
alter table outbox_messages drop constraint outbox_messages_status_check;
alter table outbox_messages add constraint outbox_messages_status_check
  check (status in ('queued', 'sending', 'sent', 'failed', 'suppressed'));
alter table outbox_messages add column failed_at timestamptz;
alter table outbox_messages add column links_erased_at timestamptz;
alter table email_suppressions add column source text check (source in ('link', 'operator', 'delivery'));
-- GET /admin/outbox?status= (D173) and the run's look for interrupted sends
create index outbox_messages_status on outbox_messages(status, created_at desc);
