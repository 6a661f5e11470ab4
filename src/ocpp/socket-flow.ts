// D157: how fast one charger's socket is read. A charger sends one call at a time and a few a minute; one that
// sent Heartbeats in a tight loop got ~12,500 "busy" answers a second, each read, parsed and answered, and slowed the
// whole process (/healthz 1.7–3.7 s, another charger's session 5× slower). Two bounds:
// - backpressure: while a socket has OCPP_MAX_PENDING_CALLS calls waiting, its TCP socket is not read (the kernel's
//   buffers fill and the sender's writes stall); reading resumes once half of them are answered. Frames already read
//   when the socket filled (the rest of one TCP read) are still answered "busy" (D11).
// - a token bucket per socket (OCPP_MESSAGES_PER_SECOND sustained, OCPP_MESSAGE_BURST at once): a socket that sends
//   more is closed with 1008 and a reason, and is not read again meanwhile.
import type { Socket } from 'node:net';

/** A socket closed for its rate whose pending answers take longer than this is cut without waiting for them. */
const CLOSE_GRACE_MS = 1_000;
export const RATE_CLOSE_REASON = 'Message rate exceeded';

export class SocketFlow {
  private full = false;
  private stopped = false;
  /** true while this flow (not ws's own backpressure) holds the socket paused */
  private paused = false;
  private tokens: number;
  private last: number;

  constructor(
    private readonly socket: Socket,
    private readonly perSecond: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
    this.last = performance.now();
  }

  /** Called with the socket's pending calls after each change: full at `max`, read again at half of it. */
  pending(count: number, max: number): void {
    if (count >= max) this.full = true;
    else if (count <= Math.floor(max / 2)) this.full = false;
    this.apply();
  }

  /** One inbound message; false when it is beyond the socket's rate (the caller closes it). */
  take(now = performance.now()): boolean {
    if (this.stopped) return true;
    const elapsed = Math.max(0, now - this.last) / 1000;
    this.last = now;
    this.tokens = Math.min(this.burst, this.tokens + elapsed * this.perSecond);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Stops reading for good and closes: with `close` (the 1008 frame), then cut after a grace if still open. */
  stop(close: () => Promise<unknown>): void {
    if (this.stopped) return;
    this.stopped = true;
    this.apply();
    close().catch(() => {});
    setTimeout(() => {
      if (!this.socket.destroyed) this.socket.destroy();
    }, CLOSE_GRACE_MS).unref();
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  private apply(): void {
    if (this.socket.destroyed) return;
    if (this.full || this.stopped) {
      if (!this.paused) this.socket.pause();
      this.paused = true;
    } else if (this.paused) {
      this.paused = false;
      this.socket.resume();
    }
  }
}
