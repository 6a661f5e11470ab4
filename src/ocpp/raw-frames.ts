// C4.11: the quarantine keeps the raw inbound frame as text. ocpp-rpc emits 'message' with the raw text right
// before 'call' with the parsed frame, synchronously for the same frame, so the text is kept by message id from
// there until the call is answered.
import type { RpcClient } from './rpc.ts';

/** More than a socket may have pending (C4.12 allows 16): older entries are dropped first. */
const MAX_PER_SOCKET = 32;

/**
 * A socket's captured frames, oldest first: message ids and texts side by side. A socket nearly always has one call
 * pending, so these arrays stay at one entry (a Map per socket reallocated its table every few messages, and that
 * table, held by a long-lived socket, was promoted to the old generation before it became garbage).
 */
interface Captured {
  ids: string[];
  texts: string[];
}

/** Removes entry i, keeping the order (the last entry, the usual case, without allocating). */
function removeAt(c: Captured, i: number): void {
  if (i === c.ids.length - 1) {
    c.ids.pop();
    c.texts.pop();
  } else {
    c.ids.splice(i, 1);
    c.texts.splice(i, 1);
  }
}

export class RawFrames {
  private readonly bySocket = new WeakMap<object, Captured>();

  watch(client: RpcClient): void {
    const frames: Captured = { ids: [], texts: [] };
    this.bySocket.set(client, frames);
    let last: string | null = null;
    client.on('message', (m: { message?: unknown; outbound?: boolean }) => {
      if (!m.outbound && typeof m.message === 'string') last = m.message;
    });
    client.on('call', (c: { outbound?: boolean; payload?: unknown }) => {
      if (c.outbound) return;
      const id = Array.isArray(c.payload) ? c.payload[1] : undefined;
      if (typeof id === 'string' && last !== null) {
        const seen = frames.ids.indexOf(id);
        if (seen >= 0) removeAt(frames, seen);
        if (frames.ids.length >= MAX_PER_SOCKET) removeAt(frames, 0);
        frames.ids.push(id);
        frames.texts.push(last);
      }
      last = null;
    });
  }

  /** The raw text of a call, removed from the socket's frames (undefined when it was not captured). */
  take(client: RpcClient, messageId: string): string | undefined {
    const frames = this.bySocket.get(client);
    if (!frames) return undefined;
    const i = frames.ids.indexOf(messageId);
    if (i < 0) return undefined;
    const raw = frames.texts[i];
    removeAt(frames, i);
    return raw;
  }
}
