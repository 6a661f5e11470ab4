-- A BootNotification the operator asked for (TriggerMessage) is not a reboot: the sessions running on the charger go
-- on (C4.6 closes them provisionally only after a reboot). A 2.0.1 charger says so (reason Triggered); a 1.6 charger
-- does not, so the boot path asks whether a TriggerMessage for a BootNotification was sent to the charger moments
-- before, once per boot of a reconnect storm: this index answers that by charger. docs/decisions.md, D134.
create index ocpp_commands_trigger_boot on ocpp_commands(charger_id, created_at) where action = 'TriggerMessage';
