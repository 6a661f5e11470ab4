// D217: whether mail goes out, on GET /metrics: outbox_deliveries_total{result} counts what the delivery decided
// (sent, retry, failed, suppressed), outbox_queued_messages and outbox_oldest_queued_seconds show what waits, and a
// failed send logs `event: outbox.delivery_failed`; with the SMTP server unreachable the job still ends `ok`.
// A queue the database cannot read at a scrape keeps its last figures. D218: a production service without
// METRICS_TOKEN says at start that GET /metrics answers anyone.
import net, { type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { AggregatorRegistry } from 'prom-client';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';
import { testClock } from '../helpers/clock.ts';
import { adminHeaders } from '../helpers/partner-factories.ts';
import { deliverOutbox } from '../../src/domain/invites/index.ts';
import { queueMessages } from '../../src/domain/invites/outbox.ts';
import { operatorOf } from '../../src/lib/operator.ts';

/** Log lines written at warn and above into an array (the service's own pino logger, into a stream). */
function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: pino({ level: 'warn' }, stream) };
}

/** The value of one series in the text of GET /metrics (undefined when it is not there). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function scrape(svc: TestService) {
  const res = await svc.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  const text = res.body;
  const result = (r: string) => sample(text, `outbox_deliveries_total{result="${r}"}`);
  return {
    sent: result('sent'),
    retry: result('retry'),
    failed: result('failed'),
    suppressed: result('suppressed'),
    queued: sample(text, 'outbox_queued_messages'),
    oldest: sample(text, 'outbox_oldest_queued_seconds'),
    jobOk: sample(text, 'job_runs_total{job="outbox-deliver",outcome="ok"}'),
  };
}

const queue = (svc: TestService, at: Date, to: string[]) =>
  queueMessages(
    svc.deps.db,
    at,
    to.map((address, i) => ({ to: address, subject: 'Uw laadtegoed', body: 'b', unsubscribeToken: `metrics-token-${address}-${i}`.replace(/[^A-Za-z0-9_-]/g, '-') })),
    operatorOf(svc.deps.config),
  );

describe('D217: mail that does not go out shows on /metrics', () => {
  it('an unreachable SMTP server: the job ends ok, every attempt counts as a retry, the queue and its age grow, then failed', async () => {
    // a port nothing listens on: every connection is refused, as with a relay that is down
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const clock = testClock('2026-11-22T10:00:00Z');
    const { lines, logger } = capturedLogger();
    const svc = await createTestService({ clock, logger, env: { SMTP_URL: `smtp://127.0.0.1:${port}` } });
    try {
      // before anything was queued or attempted: every series is there, at 0
      expect(await scrape(svc)).toMatchObject({ sent: 0, retry: 0, failed: 0, suppressed: 0, queued: 0, oldest: 0 });

      await queue(svc, clock(), ['een@klant.nl', 'twee@klant.nl']);
      clock.advance(5 * 60_000);
      // a stuck queue shows although nothing was attempted
      expect(await scrape(svc)).toMatchObject({ retry: 0, queued: 2, oldest: 300 });

      const run = await svc.app.inject({ method: 'POST', url: '/admin/jobs/outbox-deliver/run', headers: adminHeaders });
      expect(run.statusCode).toBe(200);
      expect(await scrape(svc)).toMatchObject({ jobOk: 1, sent: 0, retry: 2, failed: 0, queued: 2, oldest: 300 });
      const warned = lines.filter((l) => l.msg === 'outbox delivery failed');
      expect(warned).toHaveLength(2);
      expect(warned.every((l) => l.event === 'outbox.delivery_failed' && l.verdict === 'temporary')).toBe(true);

      // the retries go on for two days; the age counts from the first queueing
      let attempts = 1;
      for (let i = 0; i < 200; i++) {
        const row = await svc.deps.db.selectFrom('outbox_messages').select(['status', 'next_attempt_at']).where('to_email', '=', 'een@klant.nl').executeTakeFirstOrThrow();
        if (row.status !== 'queued') break;
        clock.set(row.next_attempt_at);
        await deliverOutbox(svc.deps);
        attempts++;
      }
      const given = await scrape(svc);
      expect(given).toMatchObject({ sent: 0, failed: 2, queued: 0, oldest: 0 });
      // every attempt but the last of each message was a retry
      expect(given.retry).toBe(2 * (attempts - 1));
    } finally {
      await svc.close();
    }
  });

  describe('a working SMTP server', () => {
    let sink: SmtpSink;
    let svc: TestService;
    const clock = testClock('2026-11-22T10:00:00Z');
    /** address → the RCPT answer [code, text] it gets */
    const rcptAnswers = new Map<string, [number, string]>();

    beforeAll(async () => {
      sink = await startSmtpSink({ rcpt: (address) => rcptAnswers.get(address) });
      svc = await createTestService({ clock, env: { SMTP_URL: sink.url } });
    });
    afterAll(async () => {
      await svc?.close();
      await sink?.close();
    });

    it('counts sent, a temporary refusal as retry, a bounce as failed and a suppressed address; the gauges follow the queue', async () => {
      rcptAnswers.set('later@klant.nl', [451, '4.4.1 try again later']);
      rcptAnswers.set('nobody@klant.nl', [550, '5.1.1 no such user']);
      const suppressed = await svc.app.inject({ method: 'POST', url: '/admin/suppressions', headers: adminHeaders, payload: { email: 'stil@klant.nl', reason: 'manual' } });
      expect(suppressed.statusCode).toBeLessThan(300);
      const queuedAt = clock();
      await queue(svc, queuedAt, ['ok1@klant.nl', 'ok2@klant.nl', 'later@klant.nl', 'nobody@klant.nl']);
      // queued after the entry: the suppression list stops it at delivery
      await queue(svc, queuedAt, ['stil@klant.nl']);
      clock.advance(90_000);
      expect(await scrape(svc)).toMatchObject({ queued: 5, oldest: 90 });

      expect(await deliverOutbox(svc.deps)).toMatchObject({ sent: 2, retried: 1, failed: 1, suppressed: 1 });
      expect(await scrape(svc)).toMatchObject({ sent: 2, retry: 1, failed: 1, suppressed: 1, queued: 1, oldest: 90 });

      // the relay is back: the retried message goes out and the queue is empty
      rcptAnswers.delete('later@klant.nl');
      const row = await svc.deps.db.selectFrom('outbox_messages').select('next_attempt_at').where('to_email', '=', 'later@klant.nl').executeTakeFirstOrThrow();
      clock.set(row.next_attempt_at);
      expect(await deliverOutbox(svc.deps)).toMatchObject({ sent: 1 });
      expect(await scrape(svc)).toMatchObject({ sent: 3, retry: 1, failed: 1, suppressed: 1, queued: 0, oldest: 0 });
    });
  });

  it("with WORKERS above 1 the primary's gathering counts the queue once, not once per worker (aggregator max)", async () => {
    // two processes of one service on one database, gathered as the primary gathers its workers (D61, D216)
    const clock = testClock('2026-11-22T10:00:00Z');
    const a = await createTestService({ clock });
    const b = await createTestService({ clock, db: a.testDb });
    try {
      await queue(a, clock(), ['x@klant.nl', 'y@klant.nl', 'z@klant.nl']);
      clock.advance(60_000);
      const gathered = await AggregatorRegistry.aggregate([await a.deps.metrics.getMetricsAsJSON(), await b.deps.metrics.getMetricsAsJSON()]).metrics();
      expect(sample(gathered, 'outbox_queued_messages')).toBe(3);
      expect(sample(gathered, 'outbox_oldest_queued_seconds')).toBe(60);
      // the counters are each process's own decisions: summed
      expect(sample(gathered, 'outbox_deliveries_total{result="sent"}')).toBe(0);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('a queue that cannot be read keeps the last figures and warns once; the scrape still answers', async () => {
    const clock = testClock('2026-11-22T10:00:00Z');
    const { lines, logger } = capturedLogger();
    const svc = await createTestService({ clock, logger });
    try {
      await queue(svc, clock(), ['q@klant.nl']);
      expect(await scrape(svc)).toMatchObject({ queued: 1, oldest: 0 });
      // the table out of reach (as a statement the database refuses): no 0 that would say the queue is empty
      await sql`alter table outbox_messages rename to outbox_messages_away`.execute(svc.deps.db);
      try {
        expect(await scrape(svc)).toMatchObject({ queued: 1, oldest: 0, sent: 0 });
      } finally {
        await sql`alter table outbox_messages_away rename to outbox_messages`.execute(svc.deps.db);
      }
      expect(lines.filter((l) => l.event === 'outbox.metrics_failed')).toHaveLength(1);
    } finally {
      await svc.close();
    }
  });
});

describe('D218: an open /metrics in production is said at start', () => {
  const openWarnings = (lines: Array<Record<string, unknown>>) => lines.filter((l) => l.event === 'metrics.open');

  it('production without METRICS_TOKEN logs one warning naming what is exposed and how to protect it; with it, none', async () => {
    const open = capturedLogger();
    const prod = await createTestService({ logger: open.logger, env: { APP_ENV: 'production' } });
    try {
      const warned = openWarnings(open.lines);
      expect(warned).toHaveLength(1);
      expect(warned[0]!.level).toBe(40);
      expect(String(warned[0]!.msg)).toMatch(/METRICS_TOKEN is not set: GET \/metrics answers anyone/);
      expect(String(warned[0]!.msg)).toMatch(/Authorization: Bearer <METRICS_TOKEN>/);
      // the behaviour stays: a scraper on a private network needs no token
      expect((await prod.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
    } finally {
      await prod.close();
    }

    const tokened = capturedLogger();
    const guarded = await createTestService({ logger: tokened.logger, env: { APP_ENV: 'production', METRICS_TOKEN: 'scraper-token-0123456789' } });
    try {
      expect(openWarnings(tokened.lines)).toEqual([]);
      expect((await guarded.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    } finally {
      await guarded.close();
    }

    // the sandbox is not production: no warning there
    const sandbox = capturedLogger();
    const trial = await createTestService({ logger: sandbox.logger });
    await trial.close();
    expect(openWarnings(sandbox.lines)).toEqual([]);
  });
});
