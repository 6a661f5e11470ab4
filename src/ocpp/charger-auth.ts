// C4.2 who may open a charger socket: a registered, active charger identity with its password (Security
// Profiles 1 and 2) or, with TLS_CLIENT_CA_FILE set, its client certificate (Security Profile 3), and the
// subprotocol it is served with (C4.1: 2.0.1 preferred, none → the configured default, only unknown ones →
// refused). The upgrade path itself is checked before this (server.ts).
import type { TLSSocket } from 'node:tls';
import type { Deps } from '../deps.ts';
import { checkChargerPassword } from '../domain/chargers/passwords.ts';
import { type ChargerCredentialRow, credentialsByIdentity, type RegistrationStatus } from '../domain/charging/connect-batch.ts';
import type { OcppProtocol } from './call-handler.ts';
import type { Handshake } from './rpc.ts';

export const PROTOCOLS = ['ocpp2.0.1', 'ocpp1.6'] as const satisfies readonly OcppProtocol[];

export type AuthVerdict =
  | {
      ok: true;
      chargerId: string;
      protocol: OcppProtocol;
      /** false: no subprotocol header to answer */
      negotiated: boolean;
      /** the operator's registration status when the socket opened (D135) */
      registration: RegistrationStatus;
    }
  | { ok: false; status: number; message: string; /** for the operator's log line, never sent */ reason: string };

type Refusal = Extract<AuthVerdict, { ok: false }>;

/**
 * Security Profile 3: the TLS layer asked for a client certificate (src/http/app.ts: requestCert, checked against
 * TLS_CLIENT_CA_FILE, rejectUnauthorized false so HTTP API clients without one still get in); here an OCPP
 * upgrade must carry one that chains to that CA and whose subject CN is exactly the charger identity.
 */
export function checkClientCertificate(hs: Handshake): Refusal | null {
  const socket = hs.request.socket as Partial<TLSSocket>;
  const refuse = (status: number, reason: string): Refusal => ({ ok: false, status, message: status === 403 ? 'Forbidden' : 'Unauthorized', reason });
  if (typeof socket.getPeerCertificate !== 'function') return refuse(401, 'client_cert_missing');
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return refuse(401, 'client_cert_missing');
  if (!socket.authorized) return refuse(401, 'client_cert_untrusted');
  const cn: unknown = cert.subject?.CN;
  // a subject with several CNs names no single charger
  if (typeof cn !== 'string' || cn !== hs.identity) return refuse(403, 'client_cert_cn_mismatch');
  return null;
}

/** The active charger with this identity and its password hashes (one query, or a batch: connect-batches.ts). */
export type CredentialLookup = (identity: string) => Promise<ChargerCredentialRow | null>;

export async function authenticateCharger(deps: Deps, hs: Handshake, lookup?: CredentialLookup): Promise<AuthVerdict> {
  const profile3 = Boolean(deps.config.TLS_CLIENT_CA_FILE);
  if (profile3) {
    const refused = checkClientCertificate(hs);
    if (refused) return refused;
  }
  const row = lookup ? await lookup(hs.identity) : (await credentialsByIdentity(deps.db, [hs.identity])).get(hs.identity);
  if (!row) return { ok: false, status: 401, message: 'Unauthorized', reason: 'unknown_identity' };
  // Profile 3 authenticates by certificate (OCPP: no Basic auth there); a password the charger still sends is
  // not checked, so a stale AuthorizationKey left from profile 2 does not lock a certified charger out.
  if (!profile3) {
    const password = hs.password?.toString('utf8');
    if (password === undefined) return { ok: false, status: 401, message: 'Unauthorized', reason: missingPasswordReason(hs) };
    const match = await checkChargerPassword(deps, row, password);
    if (!match) return { ok: false, status: 401, message: 'Unauthorized', reason: 'wrong_password' };
  }
  if (hs.protocols.size === 0) {
    // C4.1: a charger offering no subprotocol is served as the configured default, never unvalidated
    if (deps.config.OCPP_DEFAULT_PROTOCOL === 'refuse') {
      return { ok: false, status: 400, message: 'A WebSocket subprotocol is required', reason: 'no_subprotocol' };
    }
    return { ok: true, chargerId: row.id, protocol: deps.config.OCPP_DEFAULT_PROTOCOL, negotiated: false, registration: row.registration };
  }
  const protocol = PROTOCOLS.find((p) => hs.protocols.has(p));
  if (!protocol) {
    return {
      ok: false,
      status: 400,
      message: `Unsupported subprotocol; this gateway speaks ${PROTOCOLS.join(', ')}`,
      reason: 'unsupported_subprotocol',
    };
  }
  return { ok: true, chargerId: row.id, protocol, negotiated: true, registration: row.registration };
}

/**
 * D184: why an upgrade carried no password ocpp-rpc could take: no Authorization header (`no_password`), a Basic one
 * whose user name is not the identity in the path (`basic_user_mismatch`: ocpp-rpc reads a password only after
 * `<identity>:`), or a header that is no Basic credential at all (`bad_authorization`). Never the header itself.
 */
export function missingPasswordReason(hs: Pick<Handshake, 'headers' | 'identity'>): string {
  const header = hs.headers.authorization;
  if (typeof header !== 'string' || header.trim() === '') return 'no_password';
  const m = /^ *[Bb][Aa][Ss][Ii][Cc] +([A-Za-z0-9._~+/-]+=*) *$/.exec(header);
  if (!m) return 'bad_authorization';
  const decoded = Buffer.from(m[1]!, 'base64');
  if (decoded.indexOf(0x3a) === -1) return 'bad_authorization';
  const own = Buffer.from(`${hs.identity}:`);
  return decoded.subarray(0, own.length).equals(own) ? 'no_password' : 'basic_user_mismatch';
}
