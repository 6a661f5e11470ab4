// Many small requests answered by one: what arrives within `flushMs` (or `max` of them) is handed to `run` as one
// batch, a few batches at a time. Each caller gets its own item's answer. A batch that fails rejects each of its
// callers with the error, unless `fallback` answers them one by one.
//
// Items with the same key are never in one batch: the later one goes into a later round, after the earlier
// one's batch settled, so set-based writes keep each key's order (a charger's reconnect racing its older socket).
//
// Priority: items `priority` picks are batched on their own, ahead of the rest, and may use `priorityInFlight` slots
// beyond `maxInFlight`, so a few quick items are not held behind a queue of slow batches (one key per batch and
// the key rule above hold across both kinds).

export interface MicroBatchOptions<I, O> {
  max: number;
  flushMs: number;
  maxInFlight: number;
  key: (item: I) => string;
  /** one answer per item, in the order given */
  run: (items: I[]) => Promise<O[]>;
  /** when a whole batch failed: each item on its own (default: every caller gets the batch's error) */
  fallback?: (item: I) => Promise<O>;
  /** once per batch: its size and whether it was written as one or went one by one (metrics) */
  onBatch?: (size: number, outcome: 'batched' | 'fallback' | 'failed') => void;
  /** items batched apart from the rest and first (see above) */
  priority?: (item: I) => boolean;
  /** batches of priority items that may run beyond maxInFlight (default 0) */
  priorityInFlight?: number;
}

interface Waiting<I, O> {
  item: I;
  resolve: (o: O) => void;
  reject: (err: unknown) => void;
}

export class MicroBatcher<I, O> {
  /**
   * The waiting items, priority ones and the others apart (a batch is of one kind), each in arrival order. A batch
   * is taken from the head of its queue: a burst of thousands waiting is not walked and copied for every batch.
   */
  private waiting: { pri: Array<Waiting<I, O>>; rest: Array<Waiting<I, O>> } = { pri: [], rest: [] };
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  /** keys of the batches in flight: an item of one of them waits for the next round */
  private busy = new Set<string>();

  constructor(private readonly o: MicroBatchOptions<I, O>) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const pri = this.o.priority?.(item) ?? false;
      (pri ? this.waiting.pri : this.waiting.rest).push({ item, resolve, reject });
      if (this.fullBatchCanStart()) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.o.flushMs);
    });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queued > 0) {
      let taken: { batch: Array<Waiting<I, O>>; keys: Set<string> } | null = null;
      if (this.waiting.pri.length > 0 && this.inFlight < this.o.maxInFlight + (this.o.priorityInFlight ?? 0)) taken = this.take(true);
      if (!taken && this.inFlight < this.o.maxInFlight) taken = this.take(false);
      if (!taken) break;
      const { batch, keys } = taken;
      this.inFlight += 1;
      for (const k of keys) this.busy.add(k);
      void this.run(batch).finally(() => {
        this.inFlight -= 1;
        for (const k of keys) this.busy.delete(k);
        if (this.fullBatchCanStart()) this.flush();
        else if (this.queued > 0) this.timer ??= setTimeout(() => this.flush(), this.o.flushMs);
      });
    }
  }

  /** A whole batch of one kind waits and a slot for it is free: no reason to wait for the window. */
  private fullBatchCanStart(): boolean {
    const { max, maxInFlight } = this.o;
    if (this.waiting.pri.length >= max && this.inFlight < maxInFlight + (this.o.priorityInFlight ?? 0)) return true;
    return this.waiting.rest.length >= max && this.inFlight < maxInFlight;
  }

  private get queued(): number {
    return this.waiting.pri.length + this.waiting.rest.length;
  }

  /** The next batch of waiting items of one kind (at most `max`, one per key, none of a busy key), or null. */
  private take(pri: boolean): { batch: Array<Waiting<I, O>>; keys: Set<string> } | null {
    const queue = pri ? this.waiting.pri : this.waiting.rest;
    const batch: Array<Waiting<I, O>> = [];
    const keys = new Set<string>();
    // items passed over (their key is in this batch or in flight) stay at the head, in their order
    let skipped: Array<Waiting<I, O>> | null = null;
    let i = 0;
    for (; i < queue.length && batch.length < this.o.max; i++) {
      const w = queue[i]!;
      const k = this.o.key(w.item);
      if (!keys.has(k) && !this.busy.has(k)) {
        keys.add(k);
        batch.push(w);
      } else (skipped ??= []).push(w);
    }
    if (batch.length === 0) return null;
    if (skipped === null) queue.splice(0, i);
    else if (pri) this.waiting.pri = skipped.concat(queue.slice(i));
    else this.waiting.rest = skipped.concat(queue.slice(i));
    return { batch, keys };
  }

  private async run(batch: Array<Waiting<I, O>>): Promise<void> {
    let out: O[];
    try {
      out = await this.o.run(batch.map((w) => w.item));
    } catch (err) {
      const fallback = this.o.fallback;
      this.o.onBatch?.(batch.length, fallback ? 'fallback' : 'failed');
      if (!fallback) {
        for (const w of batch) w.reject(err);
        return;
      }
      await Promise.all(batch.map((w) => fallback(w.item).then(w.resolve, w.reject)));
      return;
    }
    this.o.onBatch?.(batch.length, 'batched');
    batch.forEach((w, i) => w.resolve(out[i]!));
  }

  /** waiting and in-flight work (tests, shutdown) */
  get idle(): boolean {
    return this.queued === 0 && this.inFlight === 0;
  }
}
