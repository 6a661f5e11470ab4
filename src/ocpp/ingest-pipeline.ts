// Group commit: the transaction messages of all this process's sockets go through one pipeline that writes them in
// batched transactions. A batch is flushed when INGEST_BATCH_MAX messages wait or INGEST_FLUSH_MS after its first
// one arrived; a few batches may be in flight at once. Each message's promise settles only after the batch holding
// it committed, so a charger is answered only once its data is durable.
//
// Order: a charger's next message is read only after its previous one was answered (the socket's queue in
// live-registry.ts), so a batch holds at most one message per charger and batches in flight never share a
// charger; nothing here reorders a charger's messages.
//
// In a batch, the common messages (readings that continue a known session, starts of new sessions) are written
// set-based (domain/charging/batch.ts: a few statements for the whole batch); the others run through the one-message
// handler inside the same transaction. If anything in the batch fails, the transaction is undone and every
// message of it runs on its own, exactly as without the pipeline, so a bad message is judged (and quarantined)
// alone and a good one is never held back by it.
import type { Deps } from '../deps.ts';
import { joinTransaction } from '../db/join-transaction.ts';
import { applySetBased, applySetBasedStarts, type BatchItem } from '../domain/charging/batch.ts';
import type { ChargerEvent, EventOutcome } from '../domain/charging/events.ts';
import { type EventContext, handleChargerEvent } from '../domain/charging/handle-event.ts';
import { maxPowerWOf } from '../domain/charging/readings.ts';

interface Pending {
  ctx: EventContext;
  ev: ChargerEvent;
  resolve: (o: EventOutcome) => void;
  reject: (err: unknown) => void;
}

export interface PipelineOptions {
  maxBatch: number;
  flushMs: number;
  /** batches in flight at once (each holds one pooled connection) */
  maxInFlight: number;
  /** called once per batch: its size, how it went, and how many of its messages were written set-based (metrics) */
  onBatch?: (b: { size: number; outcome: 'committed' | 'fallback'; setBased: number }) => void;
}

export class IngestPipeline {
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;

  constructor(
    private readonly deps: Deps,
    private readonly opts: PipelineOptions,
  ) {}

  /** The outcome of one transaction event, once the batch holding it committed. */
  submit(ctx: EventContext, ev: ChargerEvent): Promise<EventOutcome> {
    return new Promise<EventOutcome>((resolve, reject) => {
      this.queue.push({ ctx, ev, resolve, reject });
      if (this.queue.length >= this.opts.maxBatch) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.opts.flushMs);
    });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queue.length > 0 && this.inFlight < this.opts.maxInFlight) {
      const batch = this.queue.splice(0, this.opts.maxBatch);
      this.inFlight += 1;
      void this.run(batch).finally(() => {
        this.inFlight -= 1;
        // a full batch goes at once; a partial one waits for its window like any other
        if (this.queue.length >= this.opts.maxBatch) this.flush();
        else if (this.queue.length > 0) this.timer ??= setTimeout(() => this.flush(), this.opts.flushMs);
      });
    }
  }

  private async run(batch: Pending[]): Promise<void> {
    let outcomes: EventOutcome[];
    let setBased = 0;
    try {
      outcomes = await this.deps.db.transaction().execute(async (trx) => {
        // each socket's charger power, read once for all sockets of the batch that have not cached it yet (the
        // set-based path needs it; the socket keeps it until its next BootNotification)
        const uncached = batch.filter((p) => p.ctx.cache && p.ctx.cache.maxPowerW === undefined).map((p) => p.ctx.chargerId);
        const powers = await maxPowerWOf(trx, [...new Set(uncached)], this.deps.config.OCPP_MAX_POWER_W);
        for (const p of batch) if (p.ctx.cache && p.ctx.cache.maxPowerW === undefined && powers.has(p.ctx.chargerId)) p.ctx.cache.maxPowerW = powers.get(p.ctx.chargerId)!;
        const items: BatchItem[] = batch.map((p) => ({ chargerId: p.ctx.chargerId, maxPowerW: p.ctx.cache?.maxPowerW, ev: p.ev }));
        const now = this.deps.clock();
        const readings = await applySetBased(trx, items, now);
        const starts = await applySetBasedStarts(trx, items, now);
        const set = items.map((_, i) => readings[i] ?? starts[i]);
        const tdeps: Deps = { ...this.deps, db: joinTransaction(trx) };
        const all: EventOutcome[] = [];
        for (const [i, p] of batch.entries()) {
          const o = set[i];
          if (o) {
            setBased += 1;
            all.push(o);
          } else {
            all.push(await handleChargerEvent(tdeps, p.ctx, p.ev));
          }
        }
        return all;
      });
    } catch {
      // undone: each message on its own, with its own transaction, as the one-message path runs it; what it
      // throws goes to its caller (retried when transient, quarantined when the data is unusable)
      this.opts.onBatch?.({ size: batch.length, outcome: 'fallback', setBased: 0 });
      await Promise.all(batch.map((p) => handleChargerEvent(this.deps, p.ctx, p.ev).then(p.resolve, p.reject)));
      return;
    }
    this.opts.onBatch?.({ size: batch.length, outcome: 'committed', setBased });
    for (const [i, p] of batch.entries()) p.resolve(outcomes[i]!);
  }
}
