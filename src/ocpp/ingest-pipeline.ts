// Group commit: the transaction messages of all this process's sockets go through one pipeline that writes them in
// batched transactions. A batch is flushed when INGEST_BATCH_MAX messages wait or INGEST_FLUSH_MS after its first
// one arrived; a few batches may be in flight at once. Each message's promise settles only after the batch holding
// it committed, so a charger is answered only once its data is durable.
//
// Order: a charger's next message is read only after its previous one was answered (the socket's queue in
// live-registry.ts), so a batch holds at most one message per charger and batches in flight never share a
// charger; nothing here reorders a charger's messages.
//
// In a batch, the common messages (readings that continue a known session, starts of new sessions, readings outside
// any transaction) are written set-based (domain/charging/batch.ts, batch-starts.ts, batch-idle.ts: a few statements
// for the whole batch); the others run through the one-message handler inside the same transaction. If anything in
// the batch fails, the transaction is undone and every message of it runs on its own, exactly as without the
// pipeline, so a bad message is judged (and quarantined) alone and a good one is never held back by it. The three
// commonest batches need no transaction at all: one whose every message continues or stops a session its socket
// remembers, one whose every message starts a new session, and one whose every message is an idle connector's
// reading outside any transaction, are each one statement (atomic on its own) that writes everything or, when its
// checks fail, nothing; the batch then goes the transaction's way.
//
// Readings that continue a session their socket remembers (one statement in autocommit, batch.ts applyRemembered)
// are batched apart from the rest and first, with one batch slot of their own beyond the others: a charger's
// periodic reading is not held behind a burst of starts or stops (10,000 StartTransaction in a second keep every
// other slot busy for a second or more). A charger has one message in the pipeline at a time, so this reorders
// nothing of one charger.
import type { Deps } from '../deps.ts';
import { joinTransaction } from '../db/join-transaction.ts';
import { applyRemembered, applySetBased, type BatchItem, continuesRemembered } from '../domain/charging/batch.ts';
import { applyIdleAlone, applySetBasedIdle } from '../domain/charging/batch-idle.ts';
import { applySetBasedStarts, applyStartsAlone } from '../domain/charging/batch-starts.ts';
import type { ChargerEvent, EventOutcome } from '../domain/charging/events.ts';
import { type EventContext, handleChargerEvent } from '../domain/charging/handle-event.ts';
import { maxPowerWOf } from '../domain/charging/readings.ts';
import { MicroBatcher } from '../lib/micro-batch.ts';

interface Pending {
  ctx: EventContext;
  ev: ChargerEvent;
}

export interface PipelineOptions {
  maxBatch: number;
  flushMs: number;
  /** batches in flight at once (each holds one pooled connection) */
  maxInFlight: number;
  /** called once per batch: its size, how it went, and how many of its messages were written set-based (metrics) */
  onBatch?: (b: { size: number; outcome: 'committed' | 'fallback'; setBased: number; oneStatement?: boolean }) => void;
}

export class IngestPipeline {
  /** the batching itself (size, window, batches in flight, one message per charger per batch) */
  private readonly batches: MicroBatcher<Pending, EventOutcome>;

  constructor(
    private readonly deps: Deps,
    private readonly opts: PipelineOptions,
  ) {
    this.batches = new MicroBatcher<Pending, EventOutcome>({
      max: opts.maxBatch,
      flushMs: opts.flushMs,
      maxInFlight: opts.maxInFlight,
      priority: (p) => continuesRemembered(itemOf(p)),
      priorityInFlight: 1,
      key: (p) => p.ctx.chargerId,
      run: (batch) => this.run(batch),
      // undone: each message on its own, with its own transaction, as the one-message path runs it; what it
      // throws goes to its caller (retried when transient, quarantined when the data is unusable)
      fallback: (p) => handleChargerEvent(deps, p.ctx, p.ev),
      onBatch: (size, outcome) => {
        if (outcome !== 'batched') opts.onBatch?.({ size, outcome: 'fallback', setBased: 0 });
      },
    });
  }

  /** The outcome of one transaction event, once the batch holding it committed. */
  submit(ctx: EventContext, ev: ChargerEvent): Promise<EventOutcome> {
    return this.batches.submit({ ctx, ev });
  }

  private async run(batch: Pending[]): Promise<EventOutcome[]> {
    // every message continues (or stops) a session its socket remembers, or every message starts a new session, or
    // every message is a reading outside any transaction: one statement, no explicit transaction
    const items = batch.map(itemOf);
    const alone =
      (await applyRemembered(this.deps.db, items, this.deps.clock())) ??
      (await applyStartsAlone(this.deps.db, items, this.deps.clock())) ??
      (await applyIdleAlone(this.deps.db, items, this.deps.clock()));
    if (alone) {
      this.opts.onBatch?.({ size: batch.length, outcome: 'committed', setBased: batch.length, oneStatement: true });
      return alone;
    }
    let setBased = 0;
    const outcomes = await this.deps.db.transaction().execute(async (trx) => {
      // each socket's charger power, read once for all sockets of the batch that have not cached it yet (the
      // set-based path needs it; the socket keeps it until its next BootNotification)
      const uncached = batch.filter((p) => p.ctx.cache && p.ctx.cache.maxPowerW === undefined).map((p) => p.ctx.chargerId);
      const powers = await maxPowerWOf(trx, [...new Set(uncached)], this.deps.config.OCPP_MAX_POWER_W);
      for (const p of batch) if (p.ctx.cache && p.ctx.cache.maxPowerW === undefined && powers.has(p.ctx.chargerId)) p.ctx.cache.maxPowerW = powers.get(p.ctx.chargerId)!;
      const items = batch.map(itemOf); // again: with the powers just read
      const now = this.deps.clock();
      const readings = await applySetBased(trx, items, now);
      const starts = await applySetBasedStarts(trx, items, now);
      const taken = items.map((_, i) => readings[i] ?? starts[i]);
      const idle = await applySetBasedIdle(trx, items, now, taken);
      const set = taken.map((o, i) => o ?? idle[i]);
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
    this.opts.onBatch?.({ size: batch.length, outcome: 'committed', setBased, oneStatement: false });
    return outcomes;
  }
}

const itemOf = (p: Pending): BatchItem => ({ chargerId: p.ctx.chargerId, maxPowerW: p.ctx.cache?.maxPowerW, ev: p.ev, cache: p.ctx.cache });
