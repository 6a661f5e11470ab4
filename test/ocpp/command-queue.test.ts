// D161: commands to one charger go out one at a time, each only while its requester still waits. A charger that is
// slow or silent held each command its call timeout, and ocpp-rpc queued the next ones unseen: the third of three
// reached the charger 26 s after its requester had answered 504 (an operator retrying a RemoteStart had it carried
// out twice), and a request to the holding process itself waited 117 s for its place in that queue.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let other: TestService;
const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

beforeAll(async () => {
  svc = await createTestService({ listen: true, env: { OCPP_CALL_TIMEOUT_SECONDS: '2' } });
  other = await createTestService({ listen: true, db: svc.testDb, env: { OCPP_CALL_TIMEOUT_SECONDS: '2' } });
});
afterAll(async () => {
  await other?.close();
  await svc?.close();
});

const trigger = (s: TestService, chargerId: string, connectorId: number) =>
  s.app.inject({
    method: 'POST',
    url: `/admin/chargers/${chargerId}/commands`,
    headers: admin,
    payload: { action: 'TriggerMessage', payload: { requestedMessage: 'Heartbeat', connectorId } },
  });

describe('commands queued behind a silent charger (D161)', () => {
  it('sends only what its requester still waits for; the rest is 504 "not sent" and never reaches the charger', async () => {
    const user = await aUser(svc.deps);
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    const received: number[] = [];
    // a charger that takes every call and never answers
    cli.handle('TriggerMessage', ({ params }) => {
      received.push((params as { connectorId: number }).connectorId);
      return new Promise(() => {});
    });
    try {
      // two through the holding process itself, one through another process (the bus)
      const answers = await Promise.all([trigger(svc, ch.chargerId, 1), trigger(svc, ch.chargerId, 2), trigger(other, ch.chargerId, 3)]);
      for (const a of answers) expect([a.statusCode, a.json().error]).toEqual([504, 'charger_timeout']);
      const details = answers.map((a) => a.json().detail as string);
      expect(details.filter((d) => d.includes('was not sent'))).toHaveLength(2);
      // what the charger would have received later, had the queue gone on
      await new Promise((r) => setTimeout(r, 4_500));
      expect(received).toHaveLength(1);
      const rows = await svc.deps.db.selectFrom('ocpp_commands').select(['status', 'error']).where('charger_id', '=', ch.chargerId).execute();
      expect(rows.map((r) => `${r.status}/${r.error}`).sort()).toEqual(['failed/not_sent_in_time', 'failed/not_sent_in_time', 'timeout/charger_timeout']);
    } finally {
      await cli.close({ force: true });
    }
  });
});
