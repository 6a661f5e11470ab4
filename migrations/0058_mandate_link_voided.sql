-- A revocation voids the signing links of the connection (D28). A correction with acknowledge_mandate_lapses
-- revokes the machtiging; every link issued before it, signed or open, is then void: its page says so, it signs
-- nothing, and POST /v1/mandate-links issues a new link instead of handing back the old one.
alter table mandate_links add column voided_at timestamptz;

-- links of machtigingen revoked before this column existed: void from the first revocation after their issue
update mandate_links l
set voided_at = r.revoked_at
from (
  select l2.id, min(m.revoked_at) as revoked_at
  from mandate_links l2
  join mandates m on m.connection_id = l2.connection_id and m.status = 'revoked' and m.revoked_at >= l2.created_at
  group by l2.id
) r
where r.id = l.id;
