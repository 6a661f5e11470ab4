// OCPP 1.6 StartTransaction: the gateway assigns a service-wide unique integer transactionId, the same on a
// replay (C4.6); an unknown or invalid id tag still gets one (C4.4).
import { idTagVerdict } from '../../domain/chargers/id-tokens.ts';
import { allocateTransactionId } from '../../domain/charging/sessions.ts';
import type { Deps } from '../../deps.ts';
import { type ActionAdapter, expect } from '../adapter.ts';

/**
 * D255: the id tag of a StartTransaction as the readable path takes it (a string without NUL, a number as its text),
 * else null: a message that names no readable tag has no tag to judge.
 */
function tagOf(params: unknown): string | null {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return null;
  const tag = (params as Record<string, unknown>).idTag;
  if (typeof tag === 'number' && Number.isFinite(tag)) return String(tag);
  return typeof tag === 'string' && !tag.includes('\u0000') ? tag : null;
}

export const startTransaction: ActionAdapter = {
  transactional: true,
  toEvent(params, r) {
    const p = r.obj(params, 'StartTransaction');
    const meterStartWh = r.registerWh(p.meterStart, 'meterStart');
    return {
      kind: 'transaction_started',
      chargerTransactionId: null,
      connectorId: r.connector(p.connectorId, 'connectorId'),
      // an empty idTag (a charger started without a card) is the tag "", answered by the charger's policy like any
      // other (accept_all: Accepted); read as absent, it was answered Invalid and such a charger stops charging
      idTag: typeof p.idTag === 'string' ? r.str(p.idTag, 'idTag', true) : r.str(p.idTag, 'idTag'),
      startedAt: r.time(p.timestamp, 'timestamp'),
      meterStartWh,
      readings: [],
      offline: false,
    };
  },
  respond(o) {
    const s = expect(o, 'transaction_started');
    return { transactionId: Number(s.transactionId), idTagInfo: { status: s.verdict ?? 'Invalid' } };
  },
  async unusableAck(deps: Deps, chargerId: string, params: unknown) {
    // acknowledged so the charger does not retry and drop it; the id is fresh and the message is quarantined (C4.1).
    // D255: the answer is the charger's policy's verdict on its id tag (C4.4), as for a usable start: a data problem
    // (a reset clock, a date format) is no authorization problem, and Invalid stops the car of a charger set to
    // StopTransactionOnInvalidId. A message with no readable tag is Invalid, as a usable one without a tag is.
    const tag = tagOf(params);
    const status = tag === null ? 'Invalid' : (await idTagVerdict(deps, chargerId, tag)).verdict;
    return { transactionId: Number(await allocateTransactionId(deps.db)), idTagInfo: { status } };
  },
};
