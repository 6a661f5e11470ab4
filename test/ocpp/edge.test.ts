// C4.10 at the upgrade: our own checks run before ocpp-rpc sees a request (a malformed percent-encoding used to
// kill the process); item 9: one structured log line per connect, refusal, replaced connection and disconnect,
// never with the password.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { flushNotable } from '../../src/ocpp/notable-events.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, ocppClient, eventually } from '../helpers/ocpp-factories.ts';
import { logSink, rawUpgrade } from '../helpers/raw-upgrade.ts';

const log = logSink();
let svc: TestService;
let user: { userId: string; token: string };

beforeAll(async () => {
  svc = await createTestService({ listen: true, logger: createLogger({ level: 'info', destination: log.sink }) });
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

const basic = (identity: string, password: string) => 'Basic ' + Buffer.from(`${identity}:${password}`).toString('base64');
const events = (event: string) => log.lines.filter((l) => l.event === event);


describe('the upgrade is checked before ocpp-rpc (C4.10)', () => {
  it('a malformed percent-encoding gets 400; the service and a connected charger carry on', async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      const res = await rawUpgrade(svc.url, '/ocpp/%E0%A4%A');
      expect(res.status).toBe(400);
      expect(res.text).toMatch(/Connection: close/i);
      expect(await rawUpgrade(svc.url, '/ocpp/%zz')).toMatchObject({ status: 400 });
      expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
      expect(cli.state).toBe(1); // OPEN
      expect(await cli.call('Heartbeat', {})).toHaveProperty('currentTime');
      expect(events('ocpp.refuse')).toContainEqual(expect.objectContaining({ status: 400, reason: 'bad_encoding', identity: '%E0%A4%A' }));
    } finally {
      await cli.close();
    }
  });

  it('another path, a bad identity or a dot segment gets 404', async () => {
    const cases: Array<[string, string]> = [
      ['/other/CP-1', 'not_found'],
      ['/ocpp', 'not_found'],
      ['/ocpp/', 'not_found'],
      ['/ocpp/a/b', 'not_found'],
      ['/ocpp/CP-1//', 'not_found'],
      ['/ocpp/bad%20id', 'bad_identity'],
      ['/ocpp/a%2Fb', 'bad_identity'],
      ['/ocpp/%00', 'bad_identity'],
      ['/ocpp/' + 'A'.repeat(65), 'bad_identity'],
      ['/ocpp/..', 'bad_identity'],
      ['/ocpp/%2E', 'bad_identity'],
    ];
    for (const [path, reason] of cases) {
      expect({ path, status: (await rawUpgrade(svc.url, path)).status }).toEqual({ path, status: 404 });
      expect(log.lines.at(-1)).toMatchObject({ event: 'ocpp.refuse', status: 404, reason });
    }
  });

  it('a malformed Sec-WebSocket-Protocol list gets 400, not a 500 from the WebSocket library', async () => {
    const ch = await anOcppCharger(svc, user);
    const auth = basic(ch.identity, ch.password);
    for (const proto of ['ocpp1.6, ocpp1.6', ', ,', '', 'ocpp1.6,,ocpp2.0.1', '\u00ff', 'ocpp 1.6']) {
      const res = await rawUpgrade(svc.url, `/ocpp/${ch.identity}`, { 'Sec-WebSocket-Protocol': proto, authorization: auth });
      expect({ proto, status: res.status }).toEqual({ proto, status: 400 });
      expect(log.lines.at(-1)).toMatchObject({ event: 'ocpp.refuse', status: 400, reason: 'bad_subprotocol' });
    }
    // a well-formed list with an unknown name beside a known one is still accepted
    expect((await rawUpgrade(svc.url, `/ocpp/${ch.identity}`, { 'Sec-WebSocket-Protocol': 'foo, ocpp1.6', authorization: auth })).status).toBe(101);
  });

  it('an Upgrade that is not websocket gets 400', async () => {
    const ch = await anOcppCharger(svc, user);
    const res = await rawUpgrade(svc.url, `/ocpp/${ch.identity}`, { Upgrade: 'h2c', authorization: basic(ch.identity, ch.password) });
    expect(res.status).toBe(400);
    expect(log.lines.at(-1)).toMatchObject({ event: 'ocpp.refuse', status: 400, reason: 'bad_upgrade' });
  });

  it('the identity reaches the auth decoded: every identifierString character, a trailing slash and a query', async () => {
    // not registered: the 401 shows the identity passed the edge and was looked up as sent
    const odd = 'CP:1+a|b@c=d*e.f-g_h';
    expect((await rawUpgrade(svc.url, `/ocpp/${encodeURIComponent(odd)}/?x=%zz`, { authorization: basic(odd, 'pw') })).status).toBe(401);
    expect(log.lines.at(-1)).toMatchObject({ event: 'ocpp.refuse', status: 401, reason: 'unknown_identity', identity: odd });
    const ch = await anOcppCharger(svc, user);
    const res = await rawUpgrade(svc.url, `/ocpp/${ch.identity}/?source=test`, { authorization: basic(ch.identity, ch.password) });
    expect(res.status).toBe(101);
  });

  it('a refused identity in the log is capped', async () => {
    const long = '%' + 'E0%A4'.repeat(2000);
    expect((await rawUpgrade(svc.url, `/ocpp/${long}`)).status).toBe(400);
    const line = log.lines.at(-1)!;
    expect(line).toMatchObject({ reason: 'bad_encoding' });
    expect((line.identity as string).length).toBeLessThanOrEqual(101);
  });
});

describe('what a charger reports about itself reaches the log (D137)', () => {
  it('a fault with its error code and info, a security event, a failed firmware update; not a plain status', async () => {
    const ch = await anOcppCharger(svc, user);
    const c16 = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      await c16.call('StatusNotification', { connectorId: 0, status: 'Faulted', errorCode: 'GroundFailure', info: 'RCD tripped', vendorErrorCode: 'E42' });
      await c16.call('StatusNotification', { connectorId: 1, status: 'Available', errorCode: 'NoError' });
      await c16.call('FirmwareStatusNotification', { status: 'InstallationFailed' });
    } finally {
      await c16.close();
    }
    const c201 = await connectCharger(svc, ch, 'ocpp2.0.1');
    try {
      await c201.call('SecurityEventNotification', { type: 'TamperDetectionActivated', timestamp: new Date().toISOString(), techInfo: 'lid opened' });
    } finally {
      await c201.close();
    }
    const mine = events('ocpp.charger_report').filter((l) => l.chargerId === ch.chargerId);
    expect(mine).toEqual([
      expect.objectContaining({ action: 'StatusNotification', connectorId: 0, status: 'Faulted', errorCode: 'GroundFailure', info: 'RCD tripped', vendorErrorCode: 'E42' }),
      expect.objectContaining({ action: 'FirmwareStatusNotification', status: 'InstallationFailed' }),
      expect.objectContaining({ action: 'SecurityEventNotification', type: 'TamperDetectionActivated', techInfo: 'lid opened' }),
    ]);
  });
});

describe('a charger repeating a report (D242)', () => {
  it('is logged once a minute per charger and report, with the repeats counted; another fault is logged at once', async () => {
    const ch = await anOcppCharger(svc, user);
    const c16 = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      for (let i = 0; i < 5; i++) {
        await c16.call('StatusNotification', { connectorId: 1, status: 'Faulted', errorCode: 'GroundFailure', info: 'RCD tripped' });
        await c16.call('StatusNotification', { connectorId: 1, status: 'Available', errorCode: 'NoError' });
      }
      await c16.call('StatusNotification', { connectorId: 1, status: 'Faulted', errorCode: 'OverCurrentFailure' });
    } finally {
      await c16.close();
    }
    const mine = events('ocpp.charger_report').filter((l) => l.chargerId === ch.chargerId);
    expect(mine.map((l) => l.errorCode)).toEqual(['GroundFailure', 'OverCurrentFailure']);
    flushNotable(svc.deps.logger);
    const told = events('ocpp.charger_report_suppressed').filter((l) => l.chargerId === ch.chargerId);
    expect(told).toEqual([expect.objectContaining({ action: 'StatusNotification', suppressed: 4, report: expect.objectContaining({ errorCode: 'GroundFailure', connectorId: 1 }) })]);
  });
});

describe('operator log lines (item 9)', () => {
  it('connect, refusal with its reason, replaced connection and disconnect; never the password', async () => {
    const ch = await anOcppCharger(svc, user);
    const bad = ocppClient(svc, ch.identity, 'not-the-password', ['ocpp1.6']);
    await expect(bad.connect()).rejects.toMatchObject({ code: 401 });
    expect(events('ocpp.refuse').at(-1)).toMatchObject({ status: 401, reason: 'wrong_password', identity: ch.identity });

    const first = await connectCharger(svc, ch, 'ocpp2.0.1');
    const connect = events('ocpp.connect').find((l) => l.identity === ch.identity);
    expect(connect).toMatchObject({ chargerId: ch.chargerId, protocol: 'ocpp2.0.1', remoteAddress: expect.stringContaining('127.0.0.1') });

    // D123: the older socket is told why it is closed
    const replaced = new Promise<{ code: number; reason: string }>((r) => first.once('close', (e: { code: number; reason: string }) => r(e)));
    const second = await connectCharger(svc, ch, 'ocpp1.6');
    expect(await replaced).toMatchObject({ code: 1000, reason: 'Replaced by a newer connection' });
    await eventually(() =>
      expect(events('ocpp.replace')).toContainEqual(expect.objectContaining({ identity: ch.identity, chargerId: ch.chargerId, connectionId: connect!.connectionId })),
    );
    await eventually(() =>
      expect(events('ocpp.disconnect')).toContainEqual(
        expect.objectContaining({ identity: ch.identity, connectionId: connect!.connectionId, code: expect.any(Number) }),
      ),
    );
    await first.close().catch(() => {});
    await second.close({ code: 1000, reason: 'bye' });
    await eventually(() =>
      expect(events('ocpp.disconnect')).toContainEqual(expect.objectContaining({ identity: ch.identity, code: 1000, reason: 'bye' })),
    );

    const all = log.raw.join('\n');
    expect(all).not.toContain(ch.password);
    expect(all).not.toContain('not-the-password');
    expect(all).not.toMatch(/Basic [A-Za-z0-9+/=]{8,}/);
  });
});
