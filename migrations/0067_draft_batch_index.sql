-- A partner upload marks the drafts it created whose referral code is known (update partner_drafts set
-- referral_matched = true where batch_id = the upload's batch and lower(referral_code) in the known codes), in the
-- upload's transaction. No index of partner_drafts starts with batch_id, so that update read every draft of every
-- partner: an upload of ten rows into a table of a million drafts scanned the million, holding the upload's
-- transaction (and its locks) the while. With this index it reads the batch's own rows only; it also serves any
-- other lookup of a batch's drafts. docs/decisions.md, D131.
create index partner_drafts_batch on partner_drafts(batch_id);
