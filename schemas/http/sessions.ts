// Personal API session contracts (spec §2 "Session (Personal API)", §4.3 GET /sessions).
import { z } from 'zod';

/** C5.5: held energy of a session (null when no step was flagged). */
export const SessionReview = z
  .object({
    status: z.enum(['held', 'accepted', 'rejected']).describe('held: a flagged step waits for an operator; accepted/rejected: all decided'),
    reason: z
      .string()
      .describe('comma-separated: implausible_power, register_backwards, register_too_slow, future_timestamp, invalid_signature, before_session_start, register_conflict (of the undecided steps while held)'),
    held_kwh: z.number().describe('energy of the flagged steps that wait for a decision; not in kwh until accepted'),
  })
  .nullable();

export const SessionItem = z.object({
  id: z.uuid(),
  charger_id: z.uuid(),
  charger_nickname: z.string(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  kwh: z.number(),
  status: z.enum(['active', 'completed']),
  id_tag: z.string().nullable(),
  counts_for_ere: z.boolean(),
  ere_credits: z.number(),
  estimated_euro: z.number(),
  review: SessionReview.describe('C5.5: held energy and its review; null when nothing was flagged'),
  signed: z
    .object({
      readings: z.number().int().describe('register readings of the session that carry a signed meter value (OCMF)'),
      verified: z.number().int().describe('of those, how many verified with the meter key (registered for the charger, else sent by it)'),
      invalid: z.number().int().describe('of those, how many failed verification: the session is held for review (reason invalid_signature)'),
    })
    .describe('C5.5: signed meter values of the session; the rest of `readings` are unverified (no key known)'),
});

const dateTime = z.union([z.iso.datetime({ offset: true }), z.iso.date()]);

export const SessionsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
  charger_id: z.uuid().optional(),
  from: dateTime.optional().describe('sessions that started on or after (a date: from the start of that day in Amsterdam)'),
  to: dateTime.optional().describe('sessions that started on or before (a date: up to the end of that day in Amsterdam)'),
});

export const SessionList = z.object({
  sessions: z.array(SessionItem),
  limit: z.number().int(),
  offset: z.number().int(),
  estimate_basis: z.object({ price_per_ere: z.number(), effective_fee_pct: z.number() }),
});
