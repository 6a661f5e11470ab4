// D226: mail a recipient is waiting for goes out now. A delivery run sends until nothing is due (it took 100 and left
// the rest for the next minute), the sign-in links and claim confirmations before a partner's queued invites (a link
// queued behind 1,500 invites expired before its turn), and queuing mail in any process wakes the processes that
// deliver it through PostgreSQL (LISTEN/NOTIFY) instead of waiting for the next cron minute.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';
import { aUser } from '../helpers/factories.ts';
import { deliverOutbox } from '../../src/domain/invites/index.ts';
import { queueMessages } from '../../src/domain/invites/outbox.ts';
import { operatorOf } from '../../src/lib/operator.ts';

let sink: SmtpSink;
beforeAll(async () => {
  sink = await startSmtpSink();
});
afterAll(async () => {
  await sink.close();
});

const invites = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({ to: `${tag}-${i}@klant.nl`, subject: 'Uw laadtegoed', body: 'b', unsubscribeToken: `${tag}-token-${i}` }));

/** Waits (polling, at most `ms`) until `ok` holds; returns whether it did. */
async function until(ok: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return ok();
}

describe('D226: a delivery run', () => {
  it('sends the whole queue, and a sign-in link queued behind 130 invites first', async () => {
    const svc = await createTestService({ env: { SMTP_URL: sink.url } });
    try {
      const before = sink.received.length;
      const at = svc.deps.clock().getTime();
      await queueMessages(svc.deps.db, new Date(at - 60_000), invites(130, 'run'), operatorOf(svc.deps.config));
      await queueMessages(
        svc.deps.db,
        new Date(at - 30_000),
        [{ to: 'eigenaar@thuis.nl', subject: 'Inloggen', body: 'link', kind: 'dashboard_sign_in', unsubscribeToken: 'run-sign-in' }],
        operatorOf(svc.deps.config),
      );
      const run = await deliverOutbox(svc.deps);
      expect(run).toMatchObject({ due: 131, sent: 131, retried: 0, failed: 0 });
      const mine = sink.received.slice(before);
      expect(mine).toHaveLength(131);
      expect(mine[0]!.to).toEqual(['eigenaar@thuis.nl']);
      expect(mine.slice(1).map((m) => m.to[0]).sort()).toEqual(invites(130, 'run').map((m) => m.to).sort());
      const left = await svc.deps.db.selectFrom('outbox_messages').select('id').where('status', '=', 'queued').execute();
      expect(left).toEqual([]);
    } finally {
      await svc.close();
    }
  });
});

describe('D226: queued mail wakes the delivery', () => {
  let deliverer: TestService;
  let front: TestService;
  beforeAll(async () => {
    // the process that delivers runs the scheduler, its cron once a year; the other takes the requests and runs no jobs
    deliverer = await createTestService({ listen: true, jobs: true, env: { SMTP_URL: sink.url, JOBS_ENABLED: 'true', OUTBOX_DELIVER_CRON: '0 0 1 1 *' } });
    front = await createTestService({ db: deliverer.testDb, env: { SMTP_URL: sink.url } });
  });
  afterAll(async () => {
    await front.close();
    await deliverer.close();
  });

  it('a sign-in asked of another process arrives within seconds, not at the next cron minute', async () => {
    const user = await aUser(front.deps, { email: 'wakker@thuis.nl' });
    const page = await front.app.inject({ method: 'GET', url: '/dashboard' });
    const cookie = [page.headers['set-cookie'] ?? []].flat().map((c) => c.split(';')[0]).join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const res = await front.app.inject({
      method: 'POST',
      url: '/dashboard/sign-in',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email: user.email, _csrf: csrf }).toString(),
    });
    expect(res.statusCode).toBe(200);
    expect(await until(() => sink.received.some((m) => m.to.includes(user.email)), 15_000)).toBe(true);
    const row = await front.deps.db.selectFrom('outbox_messages').select(['status', 'kind']).where('to_email', '=', user.email).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'sent', kind: 'dashboard_sign_in' });
  });

  it("a partner's invites queued in one batch go out together, each once", async () => {
    const before = sink.received.length;
    await queueMessages(front.deps.db, front.deps.clock(), invites(40, 'wake'), operatorOf(front.deps.config));
    expect(await until(() => sink.received.length - before >= 40, 15_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    const to = sink.received.slice(before).map((m) => m.to[0]);
    expect(new Set(to).size).toBe(40);
    expect(to).toHaveLength(40);
  });
});
