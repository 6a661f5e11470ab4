// The group commit's batching (src/lib/micro-batch.ts): size and window, batches in flight, one item per key per
// batch, and priority items batched apart and ahead of a queue of slow batches.
import { expect, it } from 'vitest';
import { MicroBatcher } from '../../src/lib/micro-batch.ts';

interface Item {
  key: string;
  pri?: boolean;
}

/** A batcher whose batches stay in flight until the test releases them. */
function held(opts: { max: number; maxInFlight: number; flushMs?: number; priorityInFlight?: number; priority?: boolean }) {
  const batches: string[][] = [];
  const releases: Array<() => void> = [];
  const b = new MicroBatcher<Item, string>({
    max: opts.max,
    flushMs: opts.flushMs ?? 5,
    maxInFlight: opts.maxInFlight,
    key: (i) => i.key,
    ...(opts.priority ? { priority: (i: Item) => i.pri === true, priorityInFlight: opts.priorityInFlight ?? 1 } : {}),
    run: async (items) => {
      batches.push(items.map((i) => i.key));
      await new Promise<void>((r) => releases.push(r));
      return items.map((i) => `done ${i.key}`);
    },
  });
  return { b, batches, release: (k: number) => releases[k]!() };
}

const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

it('batches up to max items, one per key, the rest in the next batch once a slot is free', async () => {
  const { b, batches, release } = held({ max: 3, maxInFlight: 1 });
  const answers = [b.submit({ key: 'a' }), b.submit({ key: 'a' }), b.submit({ key: 'b' }), b.submit({ key: 'c' })];
  await tick();
  expect(batches).toEqual([['a', 'b']]);
  release(0);
  await tick();
  expect(batches).toEqual([['a', 'b'], ['a', 'c']]);
  release(1);
  expect(await Promise.all(answers)).toEqual(['done a', 'done a', 'done b', 'done c']);
  expect(b.idle).toBe(true);
});

it('runs priority items in a batch of their own while every other slot is held', async () => {
  const { b, batches, release } = held({ max: 3, maxInFlight: 1, priority: true });
  const slow = [b.submit({ key: 's1' }), b.submit({ key: 's2' })];
  await tick();
  expect(batches).toEqual([['s1', 's2']]);
  // a priority item and another slow one arrive while the only regular slot is held
  const quick = b.submit({ key: 'q1', pri: true });
  const later = b.submit({ key: 's3' });
  await tick();
  expect(batches).toEqual([['s1', 's2'], ['q1']]);
  release(1);
  expect(await quick).toBe('done q1');
  // the slow item still waits for the regular slot
  await tick();
  expect(batches).toHaveLength(2);
  release(0);
  await tick();
  expect(batches[2]).toEqual(['s3']);
  release(2);
  expect(await Promise.all([...slow, later])).toEqual(['done s1', 'done s2', 'done s3']);
});

it('never mixes priority items with the others, and takes them first when a slot is free', async () => {
  const { b, batches, release } = held({ max: 4, maxInFlight: 2, priority: true, priorityInFlight: 0 });
  const all = [b.submit({ key: 'a' }), b.submit({ key: 'p', pri: true }), b.submit({ key: 'b' }), b.submit({ key: 'q', pri: true })];
  await tick();
  expect(batches).toEqual([['p', 'q'], ['a', 'b']]);
  release(0);
  release(1);
  expect(await Promise.all(all)).toEqual(['done a', 'done p', 'done b', 'done q']);
});

it('holds a priority item whose key is in a batch in flight until that batch settled', async () => {
  const { b, batches, release } = held({ max: 4, maxInFlight: 1, priority: true });
  const first = b.submit({ key: 'k' });
  await tick();
  const second = b.submit({ key: 'k', pri: true });
  await tick();
  expect(batches).toEqual([['k']]);
  release(0);
  expect(await first).toBe('done k');
  await tick();
  expect(batches).toEqual([['k'], ['k']]);
  release(1);
  expect(await second).toBe('done k');
});

it('starts a whole batch of priority items at once, without waiting for the window', async () => {
  const { b, batches, release } = held({ max: 2, maxInFlight: 1, flushMs: 60_000, priority: true });
  const x = [b.submit({ key: 'x', pri: true }), b.submit({ key: 'y', pri: true })];
  await tick();
  expect(batches).toEqual([['x', 'y']]);
  release(0);
  expect(await Promise.all(x)).toEqual(['done x', 'done y']);
});

it('takes each batch from the head of a long queue: arrival order per key and kind, one per key, no key in two batches at once', async () => {
  // a burst: 3,000 items of 400 keys, some keys several times, a tenth of them priority items
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const items = Array.from({ length: 3000 }, (_, n) => ({ key: `k${Math.floor(rnd() * 400)}`, pri: rnd() < 0.1, n }));
  const inFlight = new Set<string>();
  const seen: Array<{ kind: boolean; kinds: number; keys: string[] }> = [];
  const order = new Map<string, number[]>();
  const b = new MicroBatcher<(typeof items)[number], number>({
    max: 16,
    flushMs: 1,
    maxInFlight: 2,
    priority: (i) => i.pri,
    priorityInFlight: 1,
    key: (i) => i.key,
    run: async (batch) => {
      for (const i of batch) {
        expect(inFlight.has(i.key)).toBe(false);
        inFlight.add(i.key);
        const kindKey = `${i.pri}|${i.key}`;
        order.set(kindKey, [...(order.get(kindKey) ?? []), i.n]);
      }
      seen.push({ kind: batch[0]!.pri, kinds: new Set(batch.map((i) => i.pri)).size, keys: batch.map((i) => i.key) });
      await tick(1);
      for (const i of batch) inFlight.delete(i.key);
      return batch.map((i) => i.n);
    },
  });
  const answers = await Promise.all(items.map((i) => b.submit(i)));
  expect(answers).toEqual(items.map((i) => i.n));
  for (const s of seen) {
    expect(s.keys.length).toBeLessThanOrEqual(16);
    expect(new Set(s.keys).size).toBe(s.keys.length);
    expect(s.kinds).toBe(1);
  }
  for (const i of items) expect(seen.some((s) => s.kind === i.pri && s.keys.includes(i.key))).toBe(true);
  for (const ns of order.values()) expect(ns).toEqual([...ns].sort((x, y) => x - y));
  expect(b.idle).toBe(true);
});
