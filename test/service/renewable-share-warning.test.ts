// D191: RENEWABLE_SHARE covers the years it names; from January 2027 the default's 2026 share was used silently. The
// start warns when the current (Amsterdam) year has no share of its own.
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createTestService } from '../helpers/app.ts';

async function startLines(at: string, env: Record<string, string> = {}): Promise<string[]> {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _e, cb) => (lines.push(chunk.toString()), cb()) });
  const svc = await createTestService({ env, clock: () => new Date(at), logger: pino({ level: 'warn' }, sink) });
  await svc.close();
  return lines.filter((l) => l.includes('RENEWABLE_SHARE'));
}

describe('D191: a year without a renewable share', () => {
  it('is warned about at start; a year with one is not', async () => {
    const warned = await startLines('2027-01-01T00:30:00+01:00'); // 2027 in Amsterdam, still 2026 in UTC
    expect(warned).toHaveLength(1);
    expect(JSON.parse(warned[0]!)).toMatchObject({ level: 40, year: 2027, configured: ['2026'] });
    expect(JSON.parse(warned[0]!).msg).toContain('RENEWABLE_SHARE has no share for 2027');
    expect(await startLines('2026-06-01T12:00:00Z')).toEqual([]);
    expect(await startLines('2027-06-01T12:00:00Z', { RENEWABLE_SHARE: '2026:0.505,2027:0.52' })).toEqual([]);
  });
});
