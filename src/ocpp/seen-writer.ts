// last_seen_at of the connected chargers, written for all of a process's sockets together: each message that is
// due a write (at most every min(30 s, heartbeat/4) per connection, call-handler.ts) is noted here, and the notes
// are written every FLUSH_MS in one statement. A fleet whose chargers each send once per 30 s would otherwise cost
// one UPDATE per message. A connection whose row names a newer connection (taken over by another process) learns
// it on that write and is closed.
import type { Deps } from '../deps.ts';
import { markSeenMany } from '../domain/charging/live-state.ts';
import { throttledLog } from '../lib/throttled-log.ts';

/** well inside the 2-heartbeat online window, short enough that "online" follows a connect at once */
const FLUSH_MS = 250;

export interface SeenSocket {
  connectionId: string;
  /** deps.clock ms of the last write noted; reset to 0 when the write failed (the next message notes it again) */
  seenWrittenAt: number;
}

export class SeenWriter {
  private pending = new Map<string, { sock: SeenSocket; at: Date; superseded: () => void }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly deps: Deps) {}

  /** Notes that this connection was seen now; `superseded` runs when its row names another connection. */
  note(chargerId: string, sock: SeenSocket, superseded: () => void): void {
    this.pending.set(chargerId, { sock, at: this.deps.clock(), superseded });
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Writes what is noted (also at a clean stop). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = [...this.pending];
    this.pending = new Map();
    if (batch.length === 0) return this.flushing;
    this.flushing = this.flushing.then(async () => {
      try {
        const written = await markSeenMany(
          this.deps,
          batch.map(([chargerId, n]) => ({ chargerId, connectionId: n.sock.connectionId, at: n.at })),
        );
        for (const [chargerId, n] of batch) if (!written.has(chargerId)) n.superseded();
      } catch (err) {
        for (const [, n] of batch) n.sock.seenWrittenAt = 0;
        // D232: during an outage this would be a line every 250 ms while chargers talk: once a minute, with a count
        throttledLog(this.deps.logger).event('warn', 'ocpp.seen_write_failed', { err, chargers: batch.length }, 'ocpp: could not write last_seen_at');
      }
    });
    return this.flushing;
  }
}
