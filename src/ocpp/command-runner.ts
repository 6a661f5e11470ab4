// C6.6 operator commands on the process that holds the charger's socket (src/ocpp/live-registry.ts hands them here).
// D161: one command at a time per socket, in the order they are taken, each sent only while its requester still
// waits for it. A command that waited behind others past its time is not sent at all (the requester has answered
// 504 by then, and a RemoteStart sent after "no answer" would be carried out twice), and a command that is sent
// gets a call timeout that ends before its requester stops waiting, so the requester hears the real outcome.
import type { Deps } from '../deps.ts';
import { CONNECTION_LOST, INVALID_ANSWER, NOT_SENT_IN_TIME, claimCommand, commandWaitMs, recordCommandOutcome } from '../domain/chargers/commands.ts';
import type { OcppMetrics } from './metrics.ts';
import { type RpcClient, TimeoutError, validateOutbound } from './rpc.ts';

/** The socket a command goes out on. */
export interface CommandSocket {
  client: RpcClient;
  protocol: string;
}

/** A command is sent only with at least this long (or the whole call timeout, when shorter) left for the charger to answer. */
const MIN_ANSWER_MS = 2_000;
/** The outcome is written this long before the requester's deadline, so it reads the outcome and not its own timeout. */
const RECORD_MARGIN_MS = 1_000;

export class CommandRunner {
  /** per socket: the command being sent now, the next one waits for it (ocpp-rpc would queue it unseen) */
  private readonly lines = new WeakMap<CommandSocket, Promise<void>>();

  constructor(
    private readonly deps: Deps,
    private readonly metrics: OcppMetrics,
  ) {}

  /** Runs the command after the socket's earlier ones; resolves when its outcome is written. */
  run(socket: CommandSocket, commandId: string): Promise<void> {
    const turn = (this.lines.get(socket) ?? Promise.resolve()).then(() => this.send(socket, commandId));
    this.lines.set(socket, turn.catch(() => {}));
    return turn;
  }

  private async send(held: CommandSocket, commandId: string): Promise<void> {
    const { deps } = this;
    const callMs = deps.config.OCPP_CALL_TIMEOUT_SECONDS * 1000;
    const minAnswerMs = Math.min(MIN_ANSWER_MS, callMs);
    const cmd = await claimCommand(deps, commandId, commandWaitMs(deps), RECORD_MARGIN_MS + minAnswerMs);
    if (!cmd) return;
    if (cmd.expired) return recordCommandOutcome(deps, cmd.id, { status: 'failed', error: NOT_SENT_IN_TIME });
    const timeoutMs = Math.max(minAnswerMs, Math.min(callMs, cmd.msLeft - RECORD_MARGIN_MS));
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    const labels = { protocol: held.protocol, action: cmd.action };
    try {
      const response = await held.client.call(cmd.action, cmd.payload, { callTimeoutMs: timeoutMs });
      // D136: the charger's answer is checked against the protocol's schema, as what we send is (C4.1)
      const invalid = validateOutbound(held.protocol, `urn:${cmd.action}.conf`, response);
      if (invalid) {
        this.metrics.callLatency.observe({ ...labels, outcome: 'error' }, seconds());
        deps.logger.warn({ chargerId: cmd.charger_id, action: cmd.action, invalid: invalid.slice(0, 300) }, 'ocpp: a charger answered a command outside its schema');
        await recordCommandOutcome(deps, cmd.id, { status: 'failed', error: `${INVALID_ANSWER}${invalid.slice(0, 300)}` });
        return;
      }
      this.metrics.callLatency.observe({ ...labels, outcome: 'answered' }, seconds());
      await recordCommandOutcome(deps, cmd.id, { status: 'answered', response });
    } catch (err) {
      const e = err as { name?: string; rpcErrorCode?: string; message?: string };
      const timeout = err instanceof TimeoutError;
      // D123: the socket closed (replaced, dropped, the process stopping) after the call went out and before an
      // answer: the charger may have acted on it, so the outcome is unknown, as after a timeout; not a refusal
      const lost = !timeout && e.name === 'AbortError' && e.rpcErrorCode === undefined;
      // a socket already closed when the call was to go out (ocpp-rpc refuses to send): nothing reached the charger
      const unsent = !timeout && !lost && e.rpcErrorCode === undefined && e.message === 'Cannot send message in this state';
      this.metrics.callLatency.observe({ ...labels, outcome: timeout || lost ? 'timeout' : 'error' }, seconds());
      await recordCommandOutcome(
        deps,
        cmd.id,
        timeout
          ? { status: 'timeout', error: 'charger_timeout' }
          : lost
            ? { status: 'timeout', error: CONNECTION_LOST }
            : unsent
              ? { status: 'failed', error: 'charger_offline' }
              : { status: 'failed', error: e.rpcErrorCode ?? e.message ?? 'error' },
      );
    }
  }
}
