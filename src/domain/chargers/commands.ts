// C6.6 remote commands. The request is written to ocpp_commands, addressed to the process that holds the
// charger's socket (C4.8 live state). That process executes it — at once when it is this process, otherwise on
// the bus event (LISTEN/NOTIFY) the requester publishes, with a slow poll as the fallback — and writes the answer
// back, announcing it on the bus; the requester waits for the row, woken by that event. C4.8: no command waits on
// a dead holder: a holder whose lease has lapsed means offline, before and while waiting.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { isOnline, liveStateOf } from './live-view.ts';
import { DomainError } from '../errors.ts';
import { requireCharger } from './ocpp-charger.ts';

export const COMMANDS_BY_PROTOCOL: Record<string, readonly string[]> = {
  'ocpp1.6': ['Reset', 'TriggerMessage', 'ChangeConfiguration', 'GetConfiguration', 'RemoteStartTransaction', 'RemoteStopTransaction'],
  'ocpp2.0.1': ['Reset', 'TriggerMessage', 'SetVariables', 'GetVariables', 'RequestStartTransaction', 'RequestStopTransaction'],
};
export const ALL_COMMANDS = [
  'Reset', 'TriggerMessage', 'ChangeConfiguration', 'SetVariables', 'GetConfiguration', 'GetVariables',
  'RemoteStartTransaction', 'RequestStartTransaction', 'RemoteStopTransaction', 'RequestStopTransaction',
] as const;
export type CommandAction = (typeof ALL_COMMANDS)[number];

/** Implemented by the OCPP edge of each process (src/ocpp/live-registry.ts); the domain sees only this. */
export interface CommandExecutor {
  instanceId: string;
  /** executes a pending ocpp_commands row addressed to this process and records the outcome */
  execute(commandId: string): Promise<void>;
  /** protocol-schema check of an outbound payload: null when valid, else the reason */
  validate(protocol: string, action: string, payload: unknown): string | null;
}

export function executorOf(deps: Deps): CommandExecutor | undefined {
  return deps.ocpp;
}

export interface CommandResult {
  ok: true;
  action: string;
  response: unknown;
}

/**
 * Whether a command sets the charger's own OCPP password (1.6 ChangeConfiguration AuthorizationKey, 2.0.1 SetVariables
 * BasicAuthPassword). Through the general command route it would be stored as sent in ocpp_commands and the gateway
 * would go on checking the old password's hash: POST /admin/chargers/:id/password/rotate does both (D100).
 */
export function setsChargerPassword(action: string, payload: unknown): boolean {
  const is = (v: unknown, name: string) => typeof v === 'string' && v.trim().toLowerCase() === name.toLowerCase();
  const p = payload as Record<string, unknown> | null;
  if (action === 'ChangeConfiguration') return is(p?.key, 'AuthorizationKey');
  if (action === 'SetVariables' && Array.isArray(p?.setVariableData)) {
    return p.setVariableData.some((d) => is((d as { variable?: { name?: unknown } } | null)?.variable?.name, 'BasicAuthPassword'));
  }
  return false;
}

/**
 * D214: an action the charger's protocol lacks is refused naming that protocol and only its actions (the route checks
 * it before the body's schema, which would list both protocols' actions; the command checks it again against the live
 * state it sends by).
 */
export function refuseForeignAction(action: string, protocol: string): void {
  const actions = COMMANDS_BY_PROTOCOL[protocol];
  if (!actions || actions.includes(action)) return;
  throw new DomainError('invalid_request', `${action} is not an ${protocol.replace(/^ocpp/, 'OCPP ')} action; this charger speaks ${protocol}: ${actions.join(', ')}`);
}

export async function sendCommand(deps: Deps, chargerId: string, action: string, payload: unknown, opts: { setsPassword?: true } = {}): Promise<CommandResult> {
  if (!opts.setsPassword && setsChargerPassword(action, payload)) {
    throw new DomainError('invalid_request', "a charger's OCPP password is set through POST /admin/chargers/{charger_id}/password/rotate, which keeps only its hash; not through a command");
  }
  await requireCharger(deps, chargerId);
  const st = await liveStateOf(deps, chargerId);
  const protocol = st?.protocol ?? null;
  if (protocol) refuseForeignAction(action, protocol);
  if (!st || !protocol || !isOnline(deps, st) || !st.instance_id) {
    throw new DomainError('charger_offline', 'The charger has no open connection.');
  }
  if (!st.boot_answered_at) {
    // C4.2: no call to a charger before its BootNotification is answered
    throw new DomainError('charger_offline', 'The charger has not completed its BootNotification yet.');
  }
  const exec = executorOf(deps);
  const invalid = exec?.validate(protocol, action, payload ?? {});
  if (invalid) throw new DomainError('invalid_request', `payload: ${invalid}`);

  const row = await deps.db
    .insertInto('ocpp_commands')
    .values({ charger_id: chargerId, instance_id: st.instance_id, action, payload: JSON.stringify(payload ?? {}) })
    .returning('id')
    .executeTakeFirstOrThrow();
  // woken when the outcome is written, by whichever process holds the charger
  const answered = wakeOn(deps, COMMAND_DONE, (p) => p.id === row.id);
  try {
    // D161: the holder sends it after the charger's earlier commands; this request waits no longer than its deadline
    if (exec && exec.instanceId === st.instance_id) void exec.execute(row.id).catch((err: unknown) => deps.logger.error({ err, commandId: row.id }, 'ocpp: command failed'));
    else {
      // the holder may answer within milliseconds: this process listens for the outcome before it asks (a process's
      // first command opens the listening connection), or its event would go by unheard and only the poll would find it
      await answered.listening(ANSWER_FALLBACK_POLL_MS);
      await deps.bus?.publish(deps.db, COMMAND_SENT, { instance: st.instance_id, id: row.id });
    }
    const done = await waitForAnswer(deps, row.id, st.instance_id, commandWaitMs(deps), answered);
    return outcomeOf(done, action, deps.config.OCPP_CALL_TIMEOUT_SECONDS);
  } finally {
    answered.stop();
  }
}

function outcomeOf(done: { status: string; response: unknown; error: string | null }, action: string, timeoutSeconds: number): CommandResult {
  if (done.status === 'answered') return { ok: true, action, response: done.response ?? {} };
  if (done.status === 'failed') {
    if (done.error === 'charger_offline') throw new DomainError('charger_offline', 'The charger disconnected before the call was sent.');
    if (done.error === 'holder_gone') throw new DomainError('charger_offline', 'The process holding the charger\'s connection is gone.');
    if (done.error === NOT_SENT_IN_TIME) {
      throw new DomainError('charger_timeout', `${action} was not sent: the charger was still busy with earlier commands when its time ran out; nothing reached the charger.`);
    }
    if (done.error?.startsWith(INVALID_ANSWER)) {
      throw new DomainError('charger_call_error', `The charger's answer to ${action} does not follow the OCPP schema: ${done.error.slice(INVALID_ANSWER.length)}`);
    }
    throw new DomainError('charger_call_error', `The charger answered with an error: ${done.error ?? 'unknown'}`);
  }
  if (done.error === CONNECTION_LOST) {
    throw new DomainError('charger_timeout', `${action} was sent to the charger, but its connection closed before an answer came: the outcome is unknown.`);
  }
  if (done.error === 'holder_gone') {
    throw new DomainError('charger_timeout', `${action} was sent to the charger, but the process holding its connection is gone before an answer came: the outcome is unknown.`);
  }
  throw new DomainError('charger_timeout', `The charger did not answer ${action} within ${timeoutSeconds} s.`);
}

/** The start of a command's error when the charger's answer did not follow the protocol's schema (D136). */
export const INVALID_ANSWER = 'invalid_answer: ';

/** A command's error when the charger's socket closed after the call was sent and before its answer (D123). */
export const CONNECTION_LOST = 'connection_lost';

/** Bus topics of remote commands: a new command for a holder, and a command's outcome written. */
export const COMMAND_SENT = 'ocpp_command';
export const COMMAND_DONE = 'ocpp_command_done';
/** Without a bus event (lost, or no bus) the requester looks at the row this often; the holder polls its own rarely */
const ANSWER_FALLBACK_POLL_MS = 1_000;

/** A promise that resolves on the next matching bus event (re-armed by next()); stop() unsubscribes. */
function wakeOn(deps: Deps, topic: string, match: (p: Record<string, unknown>) => boolean) {
  let wake: (() => void) | undefined;
  let fired = false;
  const unsubscribe = deps.bus?.subscribe(topic, (p) => {
    if (!match(p)) return;
    fired = true;
    wake?.();
  });
  return {
    /** resolves at the next event or after ms, whichever comes first */
    next(ms: number): Promise<void> {
      if (fired) {
        fired = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const t = setTimeout(done, ms);
        function done() {
          clearTimeout(t);
          wake = undefined;
          fired = false;
          resolve();
        }
        wake = done;
      });
    },
    /** resolves once the bus listens on the topic, or after ms (the poll covers an event missed) */
    listening(ms: number): Promise<void> {
      const bus = deps.bus;
      if (!bus) return Promise.resolve();
      let t: NodeJS.Timeout | undefined;
      return Promise.race([bus.listening(topic), new Promise<void>((resolve) => (t = setTimeout(resolve, ms)))]).finally(() => clearTimeout(t));
    },
    stop: () => unsubscribe?.(),
  };
}

async function waitForAnswer(deps: Deps, id: string, holder: string, maxMs: number, answered: ReturnType<typeof wakeOn>) {
  const deadline = Date.now() + maxMs;
  for (;;) {
    const r = await deps.db
      .selectFrom('ocpp_commands')
      .select(['status', 'response', 'error'])
      .select(sql<boolean>`exists (select 1 from ocpp_instances i where i.id = ${holder} and i.expires_at > now())`.as('holder_alive'))
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    if (r.status === 'answered' || r.status === 'failed' || r.status === 'timeout') return r;
    if (!r.holder_alive) {
      // C4.8: the holder's lease lapsed while we waited (it was killed): it will never answer. A command it had not
      // sent failed (the charger is offline to us); one it had sent may have been carried out: its outcome is
      // unknown, a timeout, never "offline", which would invite a second RemoteStart (D106)
      const gone = await deps.db
        .updateTable('ocpp_commands')
        .set({ status: sql`case when status = 'sent' then 'timeout' else 'failed' end`, error: 'holder_gone', answered_at: sql`now()` })
        .where('id', '=', id)
        .where('status', 'in', ['pending', 'sent'])
        .returning(['status', 'response', 'error'])
        .executeTakeFirst();
      if (gone) return gone;
      continue; // answered in the meantime: read it
    }
    if (Date.now() >= deadline) {
      // nobody answered in time: give up and say so. One still pending (behind the charger's earlier commands) is
      // marked so that its holder never sends it (D161); one sent may have been carried out: unknown
      const ended = await deps.db
        .updateTable('ocpp_commands')
        .set({
          status: sql`case when status = 'pending' then 'failed' else 'timeout' end`,
          error: sql`case when status = 'pending' then ${NOT_SENT_IN_TIME} else error end`,
          answered_at: sql`now()`,
        })
        .where('id', '=', id)
        .where('status', 'in', ['pending', 'sent'])
        .returning(['status', 'response', 'error'])
        .executeTakeFirst();
      if (ended) return ended;
      continue; // its outcome was written meanwhile: read it
    }
    await answered.next(Math.min(ANSWER_FALLBACK_POLL_MS, Math.max(10, deadline - Date.now())));
  }
}

/**
 * Claims a pending command for execution (exactly once, even with a poller running), with the milliseconds its
 * requester will still wait (the database's clock against the row's creation; the requester waits `waitMs`) and
 * whether fewer than `minLeftMs` are left: such a command is not to be sent (D161).
 */
export async function claimCommand(deps: Deps, id: string, waitMs: number, minLeftMs: number) {
  const row = await deps.db
    .updateTable('ocpp_commands')
    .set({ status: 'sent' })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returning(['id', 'charger_id', 'action', 'payload'])
    .returning(sql<number>`(extract(epoch from (created_at - now())) * 1000 + ${waitMs})::float8`.as('ms_left'))
    .executeTakeFirst();
  return row ? { ...row, msLeft: Number(row.ms_left), expired: Number(row.ms_left) < minLeftMs } : undefined;
}

/** The charger a pending command is for, or undefined once it was taken or ended. */
export async function commandTarget(deps: Deps, id: string) {
  return deps.db.selectFrom('ocpp_commands').select('charger_id').where('id', '=', id).where('status', '=', 'pending').executeTakeFirst();
}

/** The requester waits this long for a command's outcome: the call timeout and 2 s for the way back (D161). */
export const commandWaitMs = (deps: Deps): number => deps.config.OCPP_CALL_TIMEOUT_SECONDS * 1000 + 2_000;

/** A command's error when it waited behind the charger's earlier commands past its requester's time: not sent. */
export const NOT_SENT_IN_TIME = 'not_sent_in_time';

export async function pendingCommandIds(deps: Deps, instanceId: string): Promise<string[]> {
  const rows = await deps.db.selectFrom('ocpp_commands').select('id').where('instance_id', '=', instanceId).where('status', '=', 'pending').orderBy('created_at').execute();
  return rows.map((r) => r.id);
}

export async function recordCommandOutcome(
  deps: Deps,
  id: string,
  o: { status: 'answered'; response: unknown } | { status: 'failed' | 'timeout'; error: string },
): Promise<void> {
  await deps.db
    .updateTable('ocpp_commands')
    .set({
      status: o.status,
      response: o.status === 'answered' ? JSON.stringify(o.response ?? {}) : null,
      error: o.status === 'answered' ? null : o.error,
      answered_at: sql`now()`,
    })
    .where('id', '=', id)
    .execute();
  await deps.bus?.publish(deps.db, COMMAND_DONE, { id }).catch((err) => deps.logger.warn({ err }, 'ocpp: could not announce a command outcome'));
}
