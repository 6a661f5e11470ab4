-- D226: a delivery run takes the mail a recipient asked for (a dashboard sign-in link, a claim confirmation) before the
-- rest of the queue, so a sign-in link never waits behind a partner's thousands of invites; this index finds those
-- few among a long queue without reading it.
create index outbox_messages_due_requested on outbox_messages(next_attempt_at)
  where status = 'queued' and kind in ('dashboard_sign_in', 'claim_link_confirm');
