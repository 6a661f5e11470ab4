// C4 metrics on the service instance's registry (tests build several instances, so never the global one).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface OcppMetrics {
  connected: Gauge<'protocol'>;
  messages: Counter<'protocol' | 'action' | 'outcome'>;
  quirks: Counter<'kind'>;
  quarantined: Counter<'action'>;
  /** D156: unusable messages (or parts) refused because the charger's quarantine budget is spent */
  quarantineRefused: Counter<'action'>;
  /** D157: sockets closed for sending faster than OCPP_MESSAGES_PER_SECOND */
  rateClosed: Counter<'protocol'>;
  /** D219: refused upgrades, by reason (a fixed set, refusal-log.ts; never the identity or the address) */
  handshakeRefused: Counter<'reason'>;
  callLatency: Histogram<'protocol' | 'action' | 'outcome'>;
  /** messages per ingest batch (group commit), by outcome: committed, or undone and run one by one */
  ingestBatch: Histogram<'outcome'>;
  /** transaction messages by how a batch wrote them: set_based, handler (one-message handler in the batch), fallback */
  ingestMessages: Counter<'path'>;
  /** items per connect-path batch (connect-batches.ts), by kind and outcome: batched, or fallback (one by one) */
  connectBatch: Histogram<'kind' | 'outcome'>;
  /**
   * seconds from a charger's call reaching the process to its answer (the socket's queue, the batch window and its
   * commit included), by protocol and action (an action the gateway does not handle counts as `other`)
   */
  inboundCall: Histogram<'protocol' | 'action'>;
}

export function createOcppMetrics(registry: Registry): OcppMetrics {
  const existing = registry.getSingleMetric('ocpp_connected_chargers');
  if (existing) {
    return {
      connected: existing as Gauge<'protocol'>,
      messages: registry.getSingleMetric('ocpp_messages_total') as Counter<'protocol' | 'action' | 'outcome'>,
      quirks: registry.getSingleMetric('ocpp_quirks_total') as Counter<'kind'>,
      quarantined: registry.getSingleMetric('ocpp_quarantined_messages_total') as Counter<'action'>,
      quarantineRefused: registry.getSingleMetric('ocpp_quarantine_refused_total') as Counter<'action'>,
      rateClosed: registry.getSingleMetric('ocpp_rate_closed_sockets_total') as Counter<'protocol'>,
      handshakeRefused: registry.getSingleMetric('ocpp_handshake_refused_total') as Counter<'reason'>,
      callLatency: registry.getSingleMetric('ocpp_call_duration_seconds') as Histogram<'protocol' | 'action' | 'outcome'>,
      ingestBatch: registry.getSingleMetric('ocpp_ingest_batch_messages') as Histogram<'outcome'>,
      ingestMessages: registry.getSingleMetric('ocpp_ingest_messages_total') as Counter<'path'>,
      connectBatch: registry.getSingleMetric('ocpp_connect_batch_items') as Histogram<'kind' | 'outcome'>,
      inboundCall: registry.getSingleMetric('ocpp_inbound_call_seconds') as Histogram<'protocol' | 'action'>,
    };
  }
  return {
    connected: new Gauge({ name: 'ocpp_connected_chargers', help: 'Chargers with an open OCPP socket, by protocol (in cluster mode the sum over the workers)', labelNames: ['protocol'], registers: [registry] }),
    messages: new Counter({ name: 'ocpp_messages_total', help: 'OCPP messages from chargers, by protocol, action and outcome', labelNames: ['protocol', 'action', 'outcome'], registers: [registry] }),
    quirks: new Counter({ name: 'ocpp_quirks_total', help: 'Known charger deviations normalised by the gateway (C4.1), by kind', labelNames: ['kind'], registers: [registry] }),
    quarantined: new Counter({ name: 'ocpp_quarantined_messages_total', help: 'Transaction messages acknowledged but kept in quarantine (C4.1)', labelNames: ['action'], registers: [registry] }),
    quarantineRefused: new Counter({
      name: 'ocpp_quarantine_refused_total',
      help: "Unusable transaction messages refused with InternalError, not kept, because the charger's quarantine budget per day is spent (D156)",
      labelNames: ['action'],
      registers: [registry],
    }),
    rateClosed: new Counter({
      name: 'ocpp_rate_closed_sockets_total',
      help: 'Charger sockets closed (1008) for sending more messages than OCPP_MESSAGES_PER_SECOND allows (D157)',
      labelNames: ['protocol'],
      registers: [registry],
    }),
    handshakeRefused: new Counter({
      name: 'ocpp_handshake_refused_total',
      help: 'OCPP upgrades refused, by reason (wrong_password, unknown_identity, capacity, handshake_timeout, ...; anything else is other) (D219)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    callLatency: new Histogram({
      name: 'ocpp_call_duration_seconds',
      help: 'Duration of calls the gateway sends to chargers, by protocol, action and outcome',
      labelNames: ['protocol', 'action', 'outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    ingestBatch: new Histogram({
      name: 'ocpp_ingest_batch_messages',
      help: 'Transaction messages per ingest batch (group commit), by outcome: committed, or fallback (undone and run one by one)',
      labelNames: ['outcome'],
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers: [registry],
    }),
    ingestMessages: new Counter({
      name: 'ocpp_ingest_messages_total',
      help: 'Transaction messages written by the ingest pipeline, by path: set_based, handler (in the batch), fallback (undone batch, one by one)',
      labelNames: ['path'],
      registers: [registry],
    }),
    connectBatch: new Histogram({
      name: 'ocpp_connect_batch_items',
      help: 'Items per connect-path batch (credential lookups, live-state rows, BootNotification, StatusNotification), by kind and outcome: batched, or fallback (one by one)',
      labelNames: ['kind', 'outcome'],
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers: [registry],
    }),
    inboundCall: new Histogram({
      name: 'ocpp_inbound_call_seconds',
      help: "Seconds from a charger's call reaching this process to its answer (queue, batch window and commit included), by protocol and action",
      labelNames: ['protocol', 'action'],
      // finer around the fleet's 250 ms target, so a p99 there is read off, not bounded by 100 ms and 500 ms
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}
