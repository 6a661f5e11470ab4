// ChargerEvent: the one shape both OCPP versions are normalised into (ARCHITECTURE.md "normalise at the edge").
// src/ocpp/v16/* and src/ocpp/v201/* produce these; nothing below them knows an OCPP version.
// Energy is integer Wh (bigint), times are Date (UTC), transaction references are strings.
import type { IdTagVerdict } from '../chargers/id-tokens.ts';
import type { SignatureStatus } from '../ocmf/index.ts';

/** One energy register reading, already in integer Wh (unit, multiplier and phase sums applied, C4.5). */
export interface EnergyReading {
  measuredAt: Date;
  /** always 'Energy.Active.Import.Register' today; kept so other registers can follow */
  measurand: string;
  /** '' = the phase-less total (or the sum of L1–L3 when the charger reported only phases) */
  phase: string;
  wh: bigint;
  /** OCPP reading context (Sample.Periodic, Transaction.Begin, ...) as sent, or null */
  context: string | null;
  /** signed meter value (1.6 SignedData / OCMF, 2.0.1 signedMeterValue) kept verbatim, or null */
  signedData: string | null;
  /** C5.5: the verdict on signedData, given before the reading is stored (charging/signatures.ts) */
  signatureStatus?: SignatureStatus;
  /** C5.5: Power.Active.Import reported in the same meter value, W (absent when not sent): a register that
   *  creeps while the charger delivers real power is held (register_too_slow) */
  powerW?: number;
}

/** C4.11: an unreadable part of a message (a sampled value, a meter value) kept aside while the rest is applied. */
export interface AsidePart {
  reason: string;
  /** the part as the charger sent it (JSON), stored verbatim as text */
  part: unknown;
}

/**
 * C4.5: a signed meter value that arrived without a plain value beside it (1.6 SignedData alone, as
 * calibration-law meters send it in StopTransaction). It is kept as the signed value of the register reading with
 * the same timestamp (e.g. the Transaction.End reading from meterStop), or set aside when there is none.
 */
export interface SignedValue {
  measuredAt: Date;
  signedData: string;
  /** the part as sent, for the quarantine if it cannot be placed */
  part: unknown;
}

export type ConnectorStatus =
  | 'Available'
  | 'Preparing'
  | 'Charging'
  | 'SuspendedEV'
  | 'SuspendedEVSE'
  | 'Finishing'
  | 'Reserved'
  | 'Unavailable'
  | 'Faulted'
  | 'Occupied';

/** How a transaction is named by the charger: 1.6 integer ids (the gateway's), 2.0.1 the charger's own string. */
export type TransactionRef =
  | { kind: 'gateway'; transactionId: string }
  | { kind: 'charger'; transactionId: string }
  /** 1.6 StopTransaction with an id the gateway never gave (unknown or -1 after an offline start) */
  | { kind: 'unknown'; sent: string };

export type ChargerEvent =
  | { kind: 'boot'; vendor: string; model: string; serial: string | null; firmware: string | null; reason: string | null }
  | { kind: 'heartbeat' }
  | { kind: 'status'; connectorId: number; status: ConnectorStatus; errorCode: string | null; at: Date }
  | { kind: 'authorize'; idTag: string }
  | {
      kind: 'transaction_started';
      /** 1.6: null (the gateway assigns the id); 2.0.1: the charger's transactionId */
      chargerTransactionId: string | null;
      connectorId: number;
      idTag: string | null;
      startedAt: Date;
      meterStartWh: bigint | null;
      readings: EnergyReading[];
      offline: boolean;
      signed?: SignedValue[];
    }
  | {
      /** 2.0.1 TransactionEvent Updated (1.6 has only MeterValues for this) */
      kind: 'transaction_updated';
      chargerTransactionId: string;
      connectorId: number;
      idTag: string | null;
      at: Date;
      readings: EnergyReading[];
      signed?: SignedValue[];
    }
  | {
      kind: 'transaction_ended';
      ref: TransactionRef;
      /** known in 2.0.1 (evse), unknown in 1.6 */
      connectorId: number | null;
      idTag: string | null;
      endedAt: Date;
      meterStopWh: bigint | null;
      reason: string | null;
      readings: EnergyReading[];
      signed?: SignedValue[];
    }
  | {
      kind: 'meter_values';
      connectorId: number;
      /** null = missing or 0: attach by connector and time (C4.6) */
      ref: TransactionRef | null;
      readings: EnergyReading[];
      signed?: SignedValue[];
    }
  | { kind: 'notification'; name: string };

/**
 * C4.6: the transaction a MeterValues names, or null when it names none (missing, zero, or an id the gateway never
 * gave), whose readings are then placed by connector and time. The one reading of the rule for every path.
 */
export function namedTransactionOf(ev: Extract<ChargerEvent, { kind: 'meter_values' }>): string | null {
  return ev.ref !== null && ev.ref.kind !== 'unknown' ? ev.ref.transactionId : null;
}

export type { IdTagVerdict };

/** What the domain answers for each event; the adapters turn it into the protocol's response. */
export type EventOutcome = (
  | { kind: 'boot'; status: 'Accepted' | 'Pending' | 'Rejected'; intervalSeconds: number; currentTime: Date }
  | { kind: 'heartbeat'; currentTime: Date }
  | { kind: 'ack' }
  | { kind: 'authorize'; verdict: IdTagVerdict; expiresAt: Date | null }
  | { kind: 'transaction_started'; transactionId: string; verdict: IdTagVerdict | null }
  | { kind: 'transaction'; verdict: IdTagVerdict | null }
) & {
  /** signed values that matched no reading: kept aside by the edge (C4.11) */
  aside?: AsidePart[];
};
