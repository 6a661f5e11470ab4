// D142: every change an operator makes through the admin API is logged (action, ids, field names, status), never the
// values a body holds; a job run, by hand or on schedule, is logged with what it did.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger } from '../helpers/ocpp-factories.ts';
import { logSink } from '../helpers/raw-upgrade.ts';

const log = logSink();
let svc: TestService;
beforeAll(async () => {
  svc = await createTestService({ logger: createLogger({ level: 'info', destination: log.sink }) });
});
afterAll(() => svc.close());

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const lines = (event: string) => log.lines.filter((l) => l.event === event);

describe('the operator\'s actions in the log (D142)', () => {
  it('logs each change with its route, ids, field names and status, never the values; reads are not logged', async () => {
    const user = await svc.app.inject({ method: 'POST', url: '/admin/users', headers: admin, payload: { email: 'secret-owner@example.nl', full_name: 'Geheim' } });
    expect(user.statusCode).toBe(201);
    const ch = await anOcppCharger(svc, await aUser(svc.deps));
    const reg = await svc.app.inject({ method: 'PUT', url: `/admin/chargers/${ch.chargerId}/registration`, headers: admin, payload: { status: 'Rejected' } });
    expect(reg.statusCode).toBe(200);
    const bad = await svc.app.inject({ method: 'PUT', url: `/admin/chargers/${ch.chargerId}/registration`, headers: admin, payload: { status: 'Maybe' } });
    expect(bad.statusCode).toBe(400);
    await svc.app.inject({ method: 'GET', url: '/admin/jobs', headers: admin });
    expect(lines('admin.action')).toEqual([
      expect.objectContaining({ method: 'POST', route: '/admin/users', params: {}, fields: ['email', 'full_name'], status: 201 }),
      expect.objectContaining({ method: 'PUT', route: '/admin/chargers/:charger_id/registration', params: { charger_id: ch.chargerId }, fields: ['status'], status: 200 }),
      expect.objectContaining({ method: 'PUT', route: '/admin/chargers/:charger_id/registration', status: 400 }),
    ]);
    const all = log.raw.filter((l) => l.includes('admin.action')).join('\n');
    expect(all).not.toContain('secret-owner');
    expect(all).not.toContain('Geheim');
  });

  it('logs a job run by hand with its result', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/admin/jobs/rate-limit-cleanup/run', headers: admin });
    expect(res.statusCode).toBe(200);
    expect(lines('job.finished')).toContainEqual(expect.objectContaining({ job: 'rate-limit-cleanup', trigger: 'admin', result: res.json().result }));
  });
});
