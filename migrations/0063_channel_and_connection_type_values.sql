-- The values a charger's connection_type and an account's access_channel take, held by the database as the other
-- closed value sets are (0001's checks): the API documents them as enums (a client generated from /openapi.json gets
-- a union type), so no other value may be stored. The service writes only these: connection_type `ocpp` (a charger
-- that connects over OCPP) or `cloud_api` (registered by a CPO through POST /v1/chargers); access_channel `cpo_api`
-- (POST /v1/accounts), `partner_claim` (a claimed partner draft) or `personal`.
alter table chargers add constraint chargers_connection_type_check check (connection_type in ('ocpp', 'cloud_api'));
alter table accounts add constraint accounts_access_channel_check check (access_channel in ('cpo_api', 'partner_claim', 'personal'));
