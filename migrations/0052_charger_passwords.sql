-- Charger passwords rotated over OCPP (issue 10 item 8): the new password's hash waits here after the charger
-- accepted the change; the old one stays valid until the charger connects with the new one, which then
-- replaces it. password_changed_at records when the current password was set (operator or promotion).
alter table chargers add column pending_password_hash text;
alter table chargers add column password_changed_at timestamptz;
