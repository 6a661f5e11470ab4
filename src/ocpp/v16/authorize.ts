// OCPP 1.6 Authorize: the charger's id-token policy decides (C4.4).
import { type ActionAdapter, expect, utc } from '../adapter.ts';

export const authorize: ActionAdapter = {
  toEvent(params, r) {
    const p = r.obj(params, 'Authorize');
    return { kind: 'authorize', idTag: r.str(p.idTag, 'idTag', true) };
  },
  respond(o) {
    const a = expect(o, 'authorize');
    return { idTagInfo: { status: a.verdict, ...(a.expiresAt ? { expiryDate: utc(a.expiresAt) } : {}) } };
  },
};
