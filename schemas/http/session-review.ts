// Admin contracts for held energy (C5.5): the sessions waiting for a decision and the operator's decision.
import { z } from 'zod';
import { SessionReview } from './sessions.ts';
import { AdminPageFields, AdminPageQuery } from './common.ts';

export const SessionReviewParams = z.object({ session_id: z.uuid() });

export const SessionReviewBody = z.object({
  decision: z.enum(['accept', 'reject']).describe('accept: the held steps count from now on; reject: they never count'),
});

export const ReviewedSession = z.object({
  session_id: z.uuid(),
  charger_id: z.uuid(),
  kwh: z.number().describe('the counted energy after the decision'),
  review: SessionReview,
  decided_steps: z.number().int().describe('flagged steps the decision covered'),
});

export const HeldSessionsQuery = z.object({
  charger_id: z.uuid().optional().describe("only this charger's held sessions"),
  ...AdminPageQuery,
});

export const HeldSessionList = z.object({
  sessions: z.array(
    z.object({
      session_id: z.uuid(),
      charger_id: z.uuid(),
      started_at: z.string(),
      ended_at: z.string().nullable(),
      kwh: z.number(),
      review: SessionReview.unwrap(),
    }),
  ).describe('oldest first (by start, then id)'),
  ...AdminPageFields,
});
