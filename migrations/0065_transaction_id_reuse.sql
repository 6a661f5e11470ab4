-- A 2.0.1 charger names its transactions itself, and one whose counter restarted (a factory reset, a firmware update)
-- names a new transaction with the id of one that ended long ago. The session was found by (charger, transaction id)
-- and the new transaction's readings were added to the old session: its energy ran from the old stop to the new stop,
-- counting the energy of every session in between a second time. A transaction id now names the latest of a
-- charger's sessions with that id: a message for a transaction whose session ended for good before the message's
-- time opens a new session, the next generation of that id. docs/decisions.md, D99.
alter table charging_sessions add column transaction_generation integer not null default 0;
alter table charging_sessions drop constraint charging_sessions_charger_id_transaction_id_key;
create unique index charging_sessions_charger_transaction on charging_sessions(charger_id, transaction_id, transaction_generation);
