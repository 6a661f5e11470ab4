// C4.11: the raw text of each inbound call is kept from its arrival until it is answered (for the quarantine),
// per socket, at most 32 pending (src/ocpp/raw-frames.ts).
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { RawFrames } from '../../src/ocpp/raw-frames.ts';
import type { RpcClient } from '../../src/ocpp/rpc.ts';

function socket() {
  const client = new EventEmitter();
  const arrive = (id: string, text = `[2,"${id}","Heartbeat",{}]`) => {
    client.emit('message', { message: text, outbound: false });
    client.emit('call', { outbound: false, payload: [2, id, 'Heartbeat', {}] });
  };
  return { client: client as unknown as RpcClient, arrive, emitter: client };
}

describe('RawFrames', () => {
  it('gives each call its own text once, in any order of answers', () => {
    const frames = new RawFrames();
    const s = socket();
    frames.watch(s.client);
    s.arrive('a', 'text a');
    s.arrive('b', 'text b');
    s.arrive('c', 'text c');
    expect(frames.take(s.client, 'b')).toBe('text b');
    expect(frames.take(s.client, 'c')).toBe('text c');
    expect(frames.take(s.client, 'b')).toBeUndefined();
    expect(frames.take(s.client, 'a')).toBe('text a');
    expect(frames.take(s.client, 'a')).toBeUndefined();
  });

  it('keeps sockets apart, ignores outbound frames, and keeps the later text of a reused message id', () => {
    const frames = new RawFrames();
    const s1 = socket();
    const s2 = socket();
    frames.watch(s1.client);
    frames.watch(s2.client);
    s1.arrive('m', 'one');
    s1.emitter.emit('message', { message: '[3,"x",{}]', outbound: true });
    s2.arrive('m', 'two');
    s1.arrive('m', 'one again');
    expect(frames.take(s1.client, 'm')).toBe('one again');
    expect(frames.take(s1.client, 'm')).toBeUndefined();
    expect(frames.take(s2.client, 'm')).toBe('two');
    expect(frames.take(socket().client, 'm')).toBeUndefined(); // a socket never watched
  });

  it('drops the oldest of more than 32 pending', () => {
    const frames = new RawFrames();
    const s = socket();
    frames.watch(s.client);
    for (let i = 0; i < 34; i++) s.arrive(`id${i}`, `text ${i}`);
    expect(frames.take(s.client, 'id0')).toBeUndefined();
    expect(frames.take(s.client, 'id1')).toBeUndefined();
    expect(frames.take(s.client, 'id2')).toBe('text 2');
    expect(frames.take(s.client, 'id33')).toBe('text 33');
  });
});
