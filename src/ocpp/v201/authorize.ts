// OCPP 2.0.1 Authorize: the charger's id-token policy decides (C4.4).
import { type ActionAdapter, expect, isEmptyIdToken, isNoAuthorization, utc } from '../adapter.ts';

export const authorize: ActionAdapter = {
  toEvent(params, r) {
    const p = r.obj(params, 'Authorize');
    const t = r.obj(p.idToken, 'idToken');
    return { kind: 'authorize', idTag: r.str(t.idToken, 'idToken.idToken', true) };
  },
  respond(o, params) {
    const a = expect(o, 'authorize');
    const idToken = (params as Record<string, unknown> | undefined)?.idToken;
    // D183: NoAuthorization names nobody to check, whatever the charger's policy: Accepted, as TransactionEvent answers it
    if (isNoAuthorization(idToken)) return { idTokenInfo: { status: 'Accepted' } };
    if (isEmptyIdToken(idToken)) return { idTokenInfo: { status: 'Invalid' } };
    return { idTokenInfo: { status: a.verdict, ...(a.expiresAt ? { cacheExpiryDateTime: utc(a.expiresAt) } : {}) } };
  },
};
