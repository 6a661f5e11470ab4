// D156: what the gateway does when a charger's quarantine budget is spent: the message is refused with InternalError
// (the charger keeps it and resends; nothing is acknowledged that was not kept, C4.11), counted, and logged once per
// charger an hour (a charger that sends unusable data keeps sending it: one line per refusal would be the flood).
import { createRPCError } from 'ocpp-rpc';
import type { Logger } from 'pino';
import type { OcppMetrics } from './metrics.ts';

export const BUDGET_SPENT_TEXT = "This charger's quarantine budget for the day is spent: the message was not kept; retry later";

const LOG_EVERY_MS = 3_600_000;
/** chargers remembered for the once-an-hour log; past this, the entries older than an hour are dropped */
const REMEMBERED = 10_000;

export class QuarantineRefusals {
  private readonly loggedAt = new Map<string, number>();

  constructor(
    private readonly logger: Logger,
    private readonly metrics: OcppMetrics,
    private readonly budget: number,
  ) {}

  /** Counts and (once an hour per charger) logs a refusal; returns the CALLERROR to throw. */
  refuse(chargerId: string, identity: string, action: string, protocol: string, now = Date.now()): ReturnType<typeof createRPCError> {
    this.metrics.quarantineRefused.inc({ action });
    this.metrics.messages.inc({ protocol, action, outcome: 'quarantine_full' });
    const last = this.loggedAt.get(chargerId);
    if (last === undefined || now - last >= LOG_EVERY_MS || now < last) {
      if (this.loggedAt.size >= REMEMBERED) this.forgetBefore(now - LOG_EVERY_MS);
      this.loggedAt.set(chargerId, now);
      this.logger.warn(
        { event: 'ocpp.quarantine_full', identity, chargerId, action, budgetBytesPerDay: this.budget },
        'ocpp: quarantine budget spent; unusable messages of this charger are refused (logged once an hour)',
      );
    }
    return createRPCError('InternalError', BUDGET_SPENT_TEXT);
  }

  private forgetBefore(t: number): void {
    for (const [id, at] of this.loggedAt) if (at < t) this.loggedAt.delete(id);
  }
}
