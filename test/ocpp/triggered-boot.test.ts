// D134: only a reboot closes a charger's running sessions provisionally (C4.6). A BootNotification the operator asked
// for (TriggerMessage) is not one: 2.0.1 says so with reason Triggered, and a 1.6 boot that follows the operator's
// TriggerMessage for a BootNotification is read the same. Both paths: the connect batches and one message at a time.
import { afterAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, bootPayload, connectCharger, energyValue, hourAgoTimeline } from '../helpers/ocpp-factories.ts';

const services: TestService[] = [];
afterAll(async () => {
  for (const s of services) await s.close();
});

const { at } = hourAgoTimeline();

for (const [path, env] of [['connect batches', {}], ['one message at a time', { INGEST_BATCH_MAX: '0' }]] as const) {
  describe(`a triggered BootNotification (${path})`, () => {
    it('2.0.1: reason Triggered leaves the session running; PowerUp closes it provisionally', { timeout: 30_000 }, async () => {
      const svc = await createTestService({ listen: true, env });
      services.push(svc);
      const user = await aUser(svc.deps);
      const ch = await anOcppCharger(svc, user);
      const cli = await connectCharger(svc, ch, 'ocpp2.0.1');
      try {
        const tx = { transactionId: 'TRG-1' };
        await cli.call('TransactionEvent', {
          eventType: 'Started', timestamp: at(0), triggerReason: 'Authorized', seqNo: 0, transactionInfo: tx, evse: { id: 1, connectorId: 1 },
          meterValue: [energyValue('ocpp2.0.1', at(0), 1_000)],
        });
        const status = async () => (await svc.deps.db.selectFrom('charging_sessions').select(['status', 'end_provisional']).where('charger_id', '=', ch.chargerId).executeTakeFirstOrThrow());
        await cli.call('BootNotification', { ...bootPayload('ocpp2.0.1'), reason: 'Triggered' });
        expect(await status()).toEqual({ status: 'active', end_provisional: false });
        await cli.call('BootNotification', { ...bootPayload('ocpp2.0.1'), reason: 'PowerUp' });
        expect(await status()).toEqual({ status: 'completed', end_provisional: true });
      } finally {
        await cli.close();
      }
    });

    it("1.6: the boot that follows the operator's TriggerMessage leaves the session running; another boot closes it", { timeout: 30_000 }, async () => {
      const svc = await createTestService({ listen: true, env });
      services.push(svc);
      const user = await aUser(svc.deps);
      const ch = await anOcppCharger(svc, user);
      const cli = await connectCharger(svc, ch, 'ocpp1.6');
      let booted: Promise<unknown> | undefined;
      cli.handle('TriggerMessage', async ({ params }) => {
        if ((params as { requestedMessage?: string } | undefined)?.requestedMessage === 'BootNotification') booted = new Promise((r) => setTimeout(r, 20)).then(() => cli.call('BootNotification', bootPayload('ocpp1.6')));
        return { status: 'Accepted' };
      });
      try {
        const start = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 1_000, timestamp: at(0) })) as { transactionId: number };
        expect(start.transactionId).toBeGreaterThan(0);
        const res = await svc.app.inject({
          method: 'POST',
          url: `/admin/chargers/${ch.chargerId}/commands`,
          headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
          payload: { action: 'TriggerMessage', payload: { requestedMessage: 'BootNotification' } },
        });
        expect(res.statusCode).toBe(200);
        await booted;
        const status = async () => (await svc.deps.db.selectFrom('charging_sessions').select(['status', 'end_provisional']).where('charger_id', '=', ch.chargerId).executeTakeFirstOrThrow());
        expect(await status()).toEqual({ status: 'active', end_provisional: false });
        // minutes after the trigger the charger boots again: a reboot
        await svc.deps.db.updateTable('ocpp_commands').set({ created_at: new Date(Date.now() - 10 * 60_000) }).where('charger_id', '=', ch.chargerId).execute();
        await cli.call('BootNotification', bootPayload('ocpp1.6'));
        expect(await status()).toEqual({ status: 'completed', end_provisional: true });
      } finally {
        await cli.close();
      }
    });
  });
}
