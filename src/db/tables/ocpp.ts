// The charger-side tables: OCPP live state, id tokens, quarantine, commands, instances, stream slots (0020 and later).
import type { ColumnType, Generated } from 'kysely';
import type { NullableTimestamp, Timestamp } from './core.ts';

export type RegistrationStatus = 'Accepted' | 'Pending' | 'Rejected';
export type AuthPolicy = 'accept_all' | 'list';
export type IdTokenStatus = 'Accepted' | 'Blocked' | 'Expired' | 'Invalid';
type Json<T> = ColumnType<T, string, string>;

export interface OcppChargersTable {
  charger_id: string;
  registration_status: Generated<RegistrationStatus>;
  auth_policy: Generated<AuthPolicy>;
  protocol: string | null;
  serial_number: string | null;
  firmware_version: string | null;
  boot_reason: string | null;
  boot_at: NullableTimestamp;
  boot_answered_at: NullableTimestamp;
  connected: Generated<boolean>;
  connection_id: string | null;
  instance_id: string | null;
  connected_at: NullableTimestamp;
  disconnected_at: NullableTimestamp;
  last_seen_at: NullableTimestamp;
  connector_status: Generated<Json<Record<string, string>>>;
  updated_at: Generated<Date>;
}

export interface OcppIdTokensTable {
  charger_id: string;
  id_token: string;
  status: IdTokenStatus;
  expires_at: NullableTimestamp;
}

export interface OcppQuarantineTable {
  id: Generated<string>;
  charger_id: string;
  protocol: string;
  action: string;
  message_id: string | null;
  /** the CALL's payload when jsonb can hold it (no \u0000); raw is the record (migrations/0050) */
  payload: ColumnType<unknown, string | null | undefined, string | null>;
  raw: string | null;
  kind: Generated<'message' | 'part'>;
  ack: ColumnType<unknown, string | null | undefined, string | null>;
  replayed_at: NullableTimestamp;
  replay_result: 'applied' | 'unusable' | null;
  replay_reason: string | null;
  reason: string;
  received_at: Timestamp;
}

export type CommandStatus = 'pending' | 'sent' | 'answered' | 'failed' | 'timeout';

export interface OcppCommandsTable {
  id: Generated<string>;
  charger_id: string;
  instance_id: string;
  action: string;
  payload: Json<unknown>;
  status: Generated<CommandStatus>;
  response: ColumnType<unknown, string | null | undefined, string | null>;
  error: string | null;
  created_at: Generated<Date>;
  answered_at: NullableTimestamp;
}

/** C4.8: one lease per running process (migrations/0053_instance_lease.sql) */
export interface OcppInstancesTable {
  id: string;
  host: string;
  pid: number;
  started_at: Generated<Date>;
  renewed_at: Generated<Date>;
  expires_at: Date;
}

export interface OcppTables {
  ocpp_instances: OcppInstancesTable;
  ocpp_chargers: OcppChargersTable;
  ocpp_id_tokens: OcppIdTokensTable;
  ocpp_quarantine: OcppQuarantineTable;
  ocpp_commands: OcppCommandsTable;
  charger_streams: ChargerStreamsTable;
}

/** C7.1 open push streams per personal token, across processes (migrations/0059_charger_streams.sql) */
export interface ChargerStreamsTable {
  id: Generated<string>;
  token_id: string;
  opened_at: Generated<Date>;
  expires_at: Timestamp;
}
