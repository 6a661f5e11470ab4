// The session row a socket remembers between its charger's messages (batch.ts, D88): read through the SessionState
// view it is the row as written (decimal strings, a Date, nulls), and what it keeps itself between two messages are
// numbers in fields of one shape, so a reading leaves no object behind that lives until the charger's next message.
// A value that is not a safe integer is never remembered: the next batch reads the row from the table.
import { describe, expect, it } from 'vitest';
import { rememberedSession, type SessionState } from '../../src/domain/charging/batch.ts';
import type { SessionEnergy } from '../../src/domain/charging/readings.ts';

const row = { id: '3f2b8a1e-0000-4000-8000-000000000001', charger_id: '3f2b8a1e-0000-4000-8000-000000000002', transaction_id: '17', connector_id: 1, status: 'active', end_provisional: false, started_at: new Date('2026-11-28T09:00:00Z') };
const energy = (over: Partial<SessionEnergy> = {}): SessionEnergy => ({
  energy_wh: '12345',
  held_wh: '0',
  review_status: null,
  review_reason: null,
  last_meter_wh: '4012345678',
  last_reading_at: new Date('2026-11-28T10:15:00.123Z'),
  last_power_w: 7400,
  meter_start_wh: '4012333333',
  ...over,
});

const view = (s: SessionState) => ({
  id: s.id,
  x: s.x,
  charger_id: s.charger_id,
  transaction_id: s.transaction_id,
  connector_id: s.connector_id,
  status: s.status,
  end_provisional: s.end_provisional,
  started_at: s.started_at,
  energy_wh: s.energy_wh,
  held_wh: s.held_wh,
  review_status: s.review_status,
  review_reason: s.review_reason,
  last_meter_wh: s.last_meter_wh,
  last_reading_at: s.last_reading_at,
  last_power_w: s.last_power_w,
  meter_start_wh: s.meter_start_wh,
});

describe('the remembered session', () => {
  it('reads back as the row it was made from', () => {
    const e = energy({ review_status: 'held', review_reason: 'power_exceeded' });
    expect(view(rememberedSession(row, e, '3000000123')!)).toEqual({ ...row, ...e, x: '3000000123' });
    const empty = energy({ last_meter_wh: null, last_reading_at: null, last_power_w: null, meter_start_wh: null });
    expect(view(rememberedSession(row, empty, '7')!)).toEqual({ ...row, ...empty, x: '7' });
  });

  it('keeps numbers between messages, not the strings and Date a reading brings', () => {
    const s = rememberedSession(row, energy(), '3000000123')!;
    const kept = Object.values(s as object);
    expect(kept.filter((v) => v instanceof Date)).toEqual([]);
    // the only strings it holds are the session's identity and its start, which no reading changes
    expect(kept.filter((v) => typeof v === 'string').sort()).toEqual([row.charger_id, row.id, 'active', '4012333333', '17'].sort());
    expect(kept).toEqual(expect.arrayContaining([12345, 4012345678, Date.parse('2026-11-28T10:15:00.123Z'), 7400, 3000000123]));
  });

  it('is not made from a value beyond a safe integer, nor from one that is not an integer', () => {
    expect(rememberedSession(row, energy({ energy_wh: '9007199254740993' }), '1')).toBeUndefined();
    expect(rememberedSession(row, energy({ last_meter_wh: '12.5' }), '1')).toBeUndefined();
    expect(rememberedSession(row, energy(), 'x')).toBeUndefined();
  });
});
