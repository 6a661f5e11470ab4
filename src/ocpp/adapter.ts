// The shape of one OCPP action's adapter: protocol payload → ChargerEvent, domain outcome → protocol response.
import type { ChargerEvent, EventOutcome } from '../domain/charging/events.ts';
import type { Deps } from '../deps.ts';
import type { Reader } from './tolerant.ts';

export interface ActionAdapter {
  /** transaction messages are always acknowledged; an unusable one is quarantined (C4.1) */
  transactional?: boolean;
  /** a StatusNotification never gets an error (C4.4) */
  neverError?: boolean;
  toEvent(params: unknown, r: Reader): ChargerEvent;
  /** `params`: the request as sent (D183: a 2.0.1 idToken the domain never sees still gets its idTokenInfo) */
  respond(outcome: EventOutcome, params?: unknown): Record<string, unknown>;
  /**
   * the acknowledgement of an unusable transaction message (quarantined); `params` as sent, so that an id token it
   * carries still gets its charger's verdict (D255)
   */
  unusableAck?(deps: Deps, chargerId: string, params: unknown): Promise<Record<string, unknown>>;
}

export { isoUtc as utc } from '../lib/time.ts';

export function expect<K extends EventOutcome['kind']>(o: EventOutcome, kind: K): Extract<EventOutcome, { kind: K }> {
  if (o.kind !== kind) throw new Error(`adapter expected outcome ${kind}, got ${o.kind}`);
  return o as Extract<EventOutcome, { kind: K }>;
}

/**
 * Actions answered with an empty acknowledgement (C4.4 notifications). Their content is read tolerantly (a status
 * value a newer firmware knows is no reason to refuse), but a payload that is not an object cannot be one of them
 * (D130: FormationViolation / FormatViolation, as any message that cannot be understood).
 */
export function notification(name: string): ActionAdapter {
  return {
    toEvent: (params, r) => {
      r.obj(params, name);
      return { kind: 'notification', name };
    },
    respond: () => ({}),
  };
}

/**
 * D183: a 2.0.1 idToken of type NoAuthorization ("no authorization possible or needed", its idToken empty) names
 * nobody to check: it is always Accepted, by Authorize and TransactionEvent alike, and records no id tag.
 */
export function isNoAuthorization(idToken: unknown): boolean {
  if (idToken === null || typeof idToken !== 'object') return false;
  const type = (idToken as Record<string, unknown>).type;
  return typeof type === 'string' && type.trim().toLowerCase() === 'noauthorization';
}

/**
 * D213: an idToken of a type that carries an identifier (every type but NoAuthorization: ISO14443, Central, eMAID,
 * Local, ...) with none in it (empty or blank) names nobody and is no valid token: Authorize and TransactionEvent
 * answer it Invalid, whatever the charger's policy, and it records no id tag (the reader takes a blank as absent).
 */
export function isEmptyIdToken(idToken: unknown): boolean {
  if (idToken === null || typeof idToken !== 'object' || isNoAuthorization(idToken)) return false;
  const id = (idToken as Record<string, unknown>).idToken;
  return id === undefined || id === null || (typeof id === 'string' && id.trim() === '');
}
