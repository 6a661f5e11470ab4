// A bare OCPP central system: an ocpp-rpc RPCServer (strict schema validation, both protocols) that only
// acknowledges, with minimal valid answers. It is the benchmark's reference point and the simulator's unit-test
// counterpart. Optionally it records what it received and keeps per-transaction energy, so a test can check
// the simulator's own figures, and it can answer BootNotification with Pending first.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRpcServer, type SimRpcServerClient } from './rpc.ts';

export interface BareServerOptions {
  port?: number;
  host?: string;
  /** keep every received call (tests); default false */
  record?: boolean;
  /** answer the first N BootNotifications of each identity with Pending (interval pendingIntervalS) */
  pendingBoots?: number;
  pendingIntervalS?: number;
  heartbeatIntervalS?: number;
  /** accept only these identity → password pairs; default: accept everyone */
  credentials?: Map<string, string>;
  /**
   * the id tag status answered to Authorize and to a transaction's start (1.6 StartTransaction idTagInfo, 2.0.1
   * TransactionEvent Started idTokenInfo); default: Accepted for every tag
   */
  idTagStatus?: (idTag: string, answer: 'Authorize' | 'StartTransaction' | 'TransactionEvent') => string;
}

export interface ReceivedCall {
  identity: string;
  protocol: string;
  method: string;
  params: any;
}

export interface BareServer {
  url: string;
  port: number;
  received: ReceivedCall[];
  clients: Map<string, SimRpcServerClient>;
  /** energy per identity from Start/Stop (1.6) or TransactionEvent Started/Ended (2.0.1) register values */
  energyByIdentity(): Map<string, number>;
  close(): Promise<void>;
}

function energyOfSampled(sampled: any[]): number | undefined {
  // the connector's register (location Outlet, the default): not the vehicle's figure or the grid inlet's
  const reg = (sampled ?? []).filter((s) => (s.measurand ?? 'Energy.Active.Import.Register') === 'Energy.Active.Import.Register' && (s.location ?? 'Outlet') === 'Outlet');
  if (reg.length === 0) return undefined;
  const scale = (s: any) => {
    const unit = String(s.unit ?? s.unitOfMeasure?.unit ?? 'Wh');
    const mult = Number(s.unitOfMeasure?.multiplier ?? 0);
    return (unit.toLowerCase() === 'kwh' ? 1000 : 1) * 10 ** mult;
  };
  const total = reg.filter((s) => !s.phase);
  const use = total.length > 0 ? total : reg.filter((s) => /^L[123]$/.test(String(s.phase)));
  return Math.round(use.reduce((sum, s) => sum + Number(s.value) * scale(s), 0));
}

export async function startBareServer(opts: BareServerOptions = {}): Promise<BareServer> {
  const rpc = createRpcServer({ protocols: ['ocpp2.0.1', 'ocpp1.6'], strictMode: true, pingIntervalMs: 60_000 });
  const received: ReceivedCall[] = [];
  const clients = new Map<string, SimRpcServerClient>();
  const bootsSeen = new Map<string, number>();
  // energy bookkeeping (record mode only)
  let nextTxId = 1;
  const tx16 = new Map<number, { identity: string; start: number }>();
  const tx201 = new Map<string, { identity: string; start?: number; last?: number }>();
  const energy = new Map<string, number>();
  const addEnergy = (identity: string, wh: number) => energy.set(identity, (energy.get(identity) ?? 0) + wh);
  const tagStatus = (tag: unknown, answer: 'Authorize' | 'StartTransaction' | 'TransactionEvent') => opts.idTagStatus?.(String(tag), answer) ?? 'Accepted';

  rpc.auth((accept, reject, hs) => {
    if (opts.credentials) {
      const want = opts.credentials.get(hs.identity);
      if (want === undefined || hs.password?.toString('utf8') !== want) return reject(401, 'unauthorised');
    }
    // no subprotocol offered: accept without one and serve it as 1.6 (unvalidated), like most central systems
    accept({}, hs.protocols.size === 0 ? false : undefined);
  });

  rpc.on('client', (client: SimRpcServerClient) => {
    const identity = client.identity;
    clients.get(identity)?.close({ force: true }).catch(() => {});
    clients.set(identity, client);
    client.on('close', () => {
      if (clients.get(identity) === client) clients.delete(identity);
    });
    const protocol = client.protocol || 'ocpp1.6';
    const now = () => new Date().toISOString();
    client.handle(async ({ method, params }) => {
      if (opts.record) received.push({ identity, protocol, method, params });
      switch (method) {
        case 'BootNotification': {
          const n = (bootsSeen.get(identity) ?? 0) + 1;
          bootsSeen.set(identity, n);
          if (n <= (opts.pendingBoots ?? 0)) return { status: 'Pending', currentTime: now(), interval: opts.pendingIntervalS ?? 1 };
          return { status: 'Accepted', currentTime: now(), interval: opts.heartbeatIntervalS ?? 300 };
        }
        case 'Heartbeat':
          return { currentTime: now() };
        case 'Authorize': {
          const status = tagStatus(protocol === 'ocpp1.6' ? params.idTag : params.idToken?.idToken, 'Authorize');
          return protocol === 'ocpp1.6' ? { idTagInfo: { status } } : { idTokenInfo: { status } };
        }
        case 'StartTransaction': {
          const id = nextTxId++;
          if (opts.record) tx16.set(id, { identity, start: Number(params.meterStart) });
          return { transactionId: id, idTagInfo: { status: tagStatus(params.idTag, 'StartTransaction') } };
        }
        case 'StopTransaction': {
          const t = tx16.get(Number(params.transactionId));
          if (opts.record && t) {
            addEnergy(identity, Number(params.meterStop) - t.start);
            tx16.delete(Number(params.transactionId));
          }
          return { idTagInfo: { status: 'Accepted' } };
        }
        case 'TransactionEvent': {
          if (opts.record) {
            const id = String(params.transactionInfo?.transactionId);
            const wh = energyOfSampled(params.meterValue?.[0]?.sampledValue ?? []);
            const t = tx201.get(id) ?? { identity };
            if (params.eventType === 'Started' && wh !== undefined) t.start = wh;
            if (wh !== undefined) t.last = wh;
            tx201.set(id, t);
            if (params.eventType === 'Ended' && t.start !== undefined && t.last !== undefined) addEnergy(identity, t.last - t.start);
          }
          if (params.eventType === 'Ended') return {};
          return { idTokenInfo: { status: params.eventType === 'Started' ? tagStatus(params.idToken?.idToken, 'TransactionEvent') : 'Accepted' } };
        }
        case 'DataTransfer':
          return { status: 'UnknownVendorId' };
        default:
          // StatusNotification, MeterValues and every notification: an empty acknowledgement
          return {};
      }
    });
  });

  const server = http.createServer((_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  server.on('upgrade', rpc.handleUpgrade);
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}/ocpp`,
    port,
    received,
    clients,
    energyByIdentity: () => new Map(energy),
    async close() {
      await rpc.close({ force: true }).catch(() => {});
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
