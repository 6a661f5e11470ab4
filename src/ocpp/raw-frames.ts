// C4.11: the quarantine keeps the raw inbound frame as text. ocpp-rpc emits 'message' with the raw text right
// before 'call' with the parsed frame, synchronously for the same frame, so the text is kept by message id from
// there until the call is answered.
import type { RpcClient } from './rpc.ts';

/** More than a socket may have pending (C4.12 allows 16): older entries are dropped first. */
const MAX_PER_SOCKET = 32;

export class RawFrames {
  private readonly bySocket = new WeakMap<object, Map<string, string>>();

  watch(client: RpcClient): void {
    const frames = new Map<string, string>();
    this.bySocket.set(client, frames);
    let last: string | null = null;
    client.on('message', (m: { message?: unknown; outbound?: boolean }) => {
      if (!m.outbound && typeof m.message === 'string') last = m.message;
    });
    client.on('call', (c: { outbound?: boolean; payload?: unknown }) => {
      if (c.outbound) return;
      const id = Array.isArray(c.payload) ? c.payload[1] : undefined;
      if (typeof id === 'string' && last !== null) {
        frames.delete(id);
        if (frames.size >= MAX_PER_SOCKET) frames.delete(frames.keys().next().value!);
        frames.set(id, last);
      }
      last = null;
    });
  }

  /** The raw text of a call, removed from the map (undefined when it was not captured). */
  take(client: RpcClient, messageId: string): string | undefined {
    const frames = this.bySocket.get(client);
    const raw = frames?.get(messageId);
    frames?.delete(messageId);
    return raw;
  }
}
