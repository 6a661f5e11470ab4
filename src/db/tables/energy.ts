// Tables added by the energy migrations (migrations/0040_energy_ledger.sql, 0041); the columns they add to
// energy_months are typed with that table in core.ts.
import type { ColumnType, Generated } from 'kysely';
import type { NullableTimestamp, Numeric } from './core.ts';

export interface EreSalesTable {
  id: Generated<string>;
  quarter: string;
  ere: Numeric;
  price_per_ere: Numeric;
  note: string | null;
  created_at: Generated<Date>;
}

export type AllocationStatus = 'reserved' | 'payable' | 'paid';

export interface EreAllocationsTable {
  id: Generated<string>;
  sale_id: string;
  account_id: string;
  compliance_year: number;
  ere: Numeric;
  fee_pct: Numeric;
  status: Generated<AllocationStatus>;
  payout_id: string | null;
  created_at: Generated<Date>;
  payable_at: NullableTimestamp;
  paid_at: NullableTimestamp;
}

export interface ErePayoutsTable {
  id: Generated<string>;
  account_id: string;
  paid_to: 'customer' | 'partner';
  partner_id: string | null;
  ere: Numeric;
  net_cents: ColumnType<string, string | number | bigint, string | number | bigint>;
  reference: string | null;
  paid_at: ColumnType<Date, Date | string, Date | string>;
  created_at: Generated<Date>;
}

/** 0041: the watermark of the last successful energy-aggregate run (one row, id 1). */
export interface EnergyAggregateWatermarkTable {
  id: Generated<number>;
  since: ColumnType<Date, Date | string, Date | string>;
  now_month: string;
  updated_at: Generated<Date>;
}

/** 0041: per aggregated connection, the fingerprint of its MID charger set and future months still pending. */
export interface EnergyAggregateConnectionsTable {
  connection_id: string;
  fingerprint: string;
  pending_from: string | null;
  pending_to: string | null;
  updated_at: Generated<Date>;
}

export interface EnergyTables {
  energy_aggregate_watermark: EnergyAggregateWatermarkTable;
  energy_aggregate_connections: EnergyAggregateConnectionsTable;
  ere_sales: EreSalesTable;
  ere_allocations: EreAllocationsTable;
  ere_payouts: ErePayoutsTable;
}
