// C4.10 "Log lines carry at most 2 KiB of charger-supplied text": every string field of a line (messages,
// bindings, error message and stack included) is cut at 2,048 characters with a marker of what was cut, and
// deep or wide structures are bounded, whatever a caller hands the logger. Redaction still holds.
import { describe, expect, it } from 'vitest';
import { LOG_STRING_MAX } from '../../src/lib/log-cap.ts';
import { createLogger } from '../../src/logger.ts';
import { logSink } from '../helpers/raw-upgrade.ts';

const BIG = 'x'.repeat(1_000_000); // what a 2.0.1 multiplier of 2000000 used to expand a 300-byte frame into
const capped = (n: number) => 'x'.repeat(LOG_STRING_MAX) + `…[${n - LOG_STRING_MAX} more chars cut]`;

function logged(fn: (l: ReturnType<typeof createLogger>) => void) {
  const log = logSink();
  fn(createLogger({ level: 'info', destination: log.sink }));
  expect(log.raw).toHaveLength(1);
  return { line: log.lines[0]!, raw: log.raw[0]! };
}

describe('log line cap (C4.10)', () => {
  it('cuts every string field, at any depth, and says how much was cut', () => {
    const { line, raw } = logged((l) => l.warn({ value: BIG, frame: { payload: [{ sampledValue: BIG }] }, short: 'ok' }, BIG));
    expect(line.value).toBe(capped(BIG.length));
    expect(line.frame).toEqual({ payload: [{ sampledValue: capped(BIG.length) }] });
    expect(line.short).toBe('ok');
    expect(line.msg).toBe(capped(BIG.length));
    expect(raw.length).toBeLessThan(4 * (LOG_STRING_MAX + 100));
  });

  it('cuts an error message and stack as they come, with the error logged alone or under err', () => {
    for (const write of [(l: ReturnType<typeof createLogger>) => l.error(new Error(BIG)), (l: ReturnType<typeof createLogger>) => l.error({ err: new Error(BIG) })]) {
      const { line, raw } = logged(write);
      const err = line.err as { type: string; message: string; stack: string };
      expect(err.type).toBe('Error');
      expect(err.message).toBe(capped(BIG.length));
      expect(err.stack.length).toBeLessThanOrEqual(LOG_STRING_MAX + 40);
      expect(err.stack).toMatch(/more chars cut\]$/);
      expect(line.msg).toBe(capped(BIG.length));
      expect(raw.length).toBeLessThan(4 * (LOG_STRING_MAX + 100));
    }
  });

  it('caps a child logger binding, a format argument and keys', () => {
    const a = logged((l) => l.child({ identity: BIG }).info('seen %s', BIG));
    expect(a.line.identity).toBe(capped(BIG.length));
    expect((a.line.msg as string).length).toBeLessThanOrEqual(LOG_STRING_MAX + 40);
    const b = logged((l) => l.info({ [BIG]: 1 }, 'odd key'));
    expect(Object.keys(b.line)).toContain(capped(BIG.length));
  });

  it('bounds wide and deep structures', () => {
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 1000; i++) at = (at.next = {}) as Record<string, unknown>;
    const { line, raw } = logged((l) => l.info({ many: Array.from({ length: 100_000 }, () => 'y'), deep }, 'shapes'));
    const many = line.many as string[];
    expect(many).toHaveLength(101);
    expect(many.at(-1)).toBe('[99900 more items cut]');
    expect(raw).toContain('[nested too deep]');
    expect(raw.length).toBeLessThan(10_000);
  });

  it('leaves short lines as they are and still redacts secrets', () => {
    const { line } = logged((l) => l.info({ identity: 'CP-1', nested: { password: 'hunter2', note: 'n' } }, 'hello'));
    expect(line).toMatchObject({ identity: 'CP-1', nested: { password: '[redacted]', note: 'n' }, msg: 'hello' });
  });
});
