// Malformed WebSocket upgrade requests (paths, percent-encodings, identities, headers, subprotocols, Basic
// auth, half-sent) and malformed HTTP requests on the documented routes, as raw bytes for raw-http.ts.
import crypto from 'node:crypto';
import { deepArray, deepObject, nastyValue, toJson } from './json.ts';
import type { Prng } from './prng.ts';
import { buildRequest } from './raw-http.ts';

export interface EdgeCase {
  label: string;
  request: Buffer;
  halfSend?: boolean;
  /** the request line and headers are well-formed HTTP (the answer must then be fastify's, in the error shape) */
  wellFormed: boolean;
  /** the server may rightly wait for more bytes (a Content-Length or chunking the body does not match) */
  mayWait?: boolean;
}

const BAD_SEGMENTS = ['%E0%A4%A', '%', '%zz', '%C0%AF', '%C0%80', '%ED%A0%80', '%F8%88%80%80%80', '%FF', '%00', 'CP%00x', '%2e%2e%2f', '..%2f..%2fetc',
  '__proto__', 'constructor', 'toString', 'x'.repeat(65), 'A'.repeat(5000), 'CP%3A1', 'CP:1', 'C P', 'ü', '%C3%BC', 'a/b', '', '/', '%20', '*', 'CP-1?x=%zz', 'CP-1#frag'];

export function upgradeCase(r: Prng, chargers: Array<{ identity: string; password: string }>): EdgeCase & { authOk: boolean } {
  const ch = r.pick(chargers);
  const seg = r.chance(0.35) ? ch.identity : r.pick(BAD_SEGMENTS);
  const path = r.pick([`/ocpp/${seg}`, `/ocpp/${seg}/`, `/ocpp//${seg}`, `/OCPP/${seg}`, `/${seg}`, `/ocpp`, '/ocpp/', `/ocpp/${seg}?%zz`, '*', `/ocpp/${seg}/extra`]);
  const key = r.pick([crypto.randomBytes(16).toString('base64'), '', 'not-base64!!', 'x'.repeat(5000), undefined]);
  const headers: Array<[string, string]> = [];
  const upgrade = r.pick(['websocket', 'WebSocket', 'websocket, h2c', 'h2c', '', 'websocket\u0000', undefined]);
  if (upgrade !== undefined) headers.push(['Upgrade', upgrade]);
  const conn = r.pick(['Upgrade', 'keep-alive, Upgrade', 'upgrade', 'close', '', undefined]);
  if (conn !== undefined) headers.push(['Connection', conn]);
  if (key !== undefined) headers.push(['Sec-WebSocket-Key', key]);
  const version = r.pick(['13', '8', 'abc', '', '13, 8', undefined]);
  if (version !== undefined) headers.push(['Sec-WebSocket-Version', version]);
  const proto = r.pick(['ocpp1.6', 'ocpp2.0.1', 'ocpp2.0.1, ocpp1.6', 'ocpp2.1', ', ,', 'ocpp1.6, ocpp1.6', 'x'.repeat(9000), '\u00ff', undefined]);
  if (proto !== undefined) headers.push(['Sec-WebSocket-Protocol', proto]);
  const pass = r.chance(0.5) ? ch.password : r.pick(['', 'wrong', 'x'.repeat(5000), '\u0000']);
  const auth = r.pick([
    `Basic ${Buffer.from(`${ch.identity}:${pass}`).toString('base64')}`,
    `Basic ${Buffer.from(`${seg}:${pass}`).toString('base64')}`,
    'Basic', 'Basic ', 'Basic !!!not-base64', `Basic ${Buffer.from('no-colon').toString('base64')}`, `Basic ${Buffer.from(':').toString('base64')}`,
    `Basic ${'A'.repeat(20_000)}`, 'Bearer x', `basic ${Buffer.from(`${ch.identity}:${pass}`).toString('base64')}`, undefined,
  ]);
  if (auth !== undefined) headers.push(['Authorization', auth]);
  if (r.chance(0.05)) headers.push(['X-Huge', 'h'.repeat(r.pick([8_000, 20_000, 70_000]))]);
  if (r.chance(0.05)) for (let i = 0; i < 200; i++) headers.push([`X-H${i}`, 'v']);
  const halfSend = r.chance(0.08);
  const label = `upgrade ${path.slice(0, 60)} upgrade=${upgrade} conn=${conn} ver=${version} proto=${proto?.slice(0, 20)} auth=${auth?.slice(0, 30)}${halfSend ? ' (half-sent)' : ''}`;
  // the only requests that may be upgraded: the charger's own identity with its own password
  const good = Buffer.from(`${ch.identity}:${ch.password}`).toString('base64');
  const authOk = seg === ch.identity && (auth === `Basic ${good}` || auth === `basic ${good}`);
  return { label, request: buildRequest('GET', path, headers), halfSend, wellFormed: false, authOk };
}

export interface RouteSpec {
  method: string;
  path: string;
  /** content types the route documents for its error answers (text/html pages answer errors in HTML) */
  html: boolean;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PROPFIND', 'get'];
const PARAMS = () => [crypto.randomUUID(), '00000000-0000-0000-0000-000000000000', 'abc', '%zz', '%E0%A4%A', '%C0%AF', '..%2f..', '__proto__', 'constructor',
  '-1', '0', '1e21', 'x'.repeat(3000), "'%20or%201=1--", '%00', '%F0%9F%94%8C', '2026-13', '9999999999999999999999'];
const QUERIES = ['', '?limit=-1', '?limit=1e999', '?limit=0', '?limit=99999999999999999999', '?offset=abc', '?offset=-5', '?a[b]=c', '?__proto__[x]=1',
  '?constructor[prototype][x]=1', '?%zz=1', '?x=%E0%A4%A', `?q=${'x'.repeat(5000)}`, '?&&&==', '?limit=1&limit=2', '?month=2026-13', '?from=yesterday', '?status=%00'];

export function httpCase(r: Prng, routes: RouteSpec[], tokens: { admin: string; personal: string }): EdgeCase & { route: RouteSpec } {
  const route = r.pick(routes);
  const method = r.chance(0.7) ? route.method : r.pick(METHODS);
  let path = route.path.replace(/\{[^}]+\}/g, () => (r.chance(0.3) ? crypto.randomUUID() : r.pick(PARAMS())));
  path += r.pick(QUERIES);
  const headers: Array<[string, string]> = [];
  const auth = r.pick([undefined, `Bearer ${tokens.admin}`, `Bearer ${tokens.personal}`, `Bearer ${r.str(r.int(0, 80))}`, 'Bearer', 'Basic Zm9vOmJhcg==', `Bearer ${tokens.admin}x`, `Bearer ${'A'.repeat(5000)}`]);
  if (auth !== undefined) headers.push(['Authorization', auth]);
  const ctype = r.pick(['application/json', 'application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16',
    '', 'application/jsonx', '*/*', 'text/csv', 'application/json; charset=latin1', undefined]);
  if (ctype !== undefined) headers.push(['Content-Type', ctype]);
  let body: string | undefined;
  if (method !== 'GET' && method !== 'HEAD' ? r.chance(0.9) : r.chance(0.1)) {
    body = r.pick<() => string>([
      () => toJson(nastyValue(r, true)),
      () => toJson({ [r.pick(['name', 'nickname', 'email', 'type', 'ean', 'iban', 'month', 'sessions', 'customers', 'ocpp_identity', 'scopes'])]: nastyValue(r, true), extra: nastyValue(r, true) }),
      () => r.pick(['abc', '{', '{"a":', 'null', '[]', '""', '{"a":1}garbage', '\u0000', '\ufeff{}', 'a=1&b=%zz&__proto__[x]=1']),
      () => deepArray(10_000).text,
      () => deepObject(10_000).text,
      () => '{"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}}}',
      () => JSON.stringify({ items: Array.from({ length: 20_000 }, (_, i) => ({ i })) }),
      () => 'x'.repeat(r.pick([100, 1_100_000])),
    ])();
  }
  if (r.chance(0.03)) headers.push(['Transfer-Encoding', r.pick(['chunked', 'gzip', 'chunked, chunked'])]);
  if (r.chance(0.03)) headers.push(['Content-Length', r.pick(['-1', 'abc', '99999999999', '1, 2'])]);
  // a server may answer a body over its limit and reset the connection before the client has read the answer
  const framing = headers.some(([k]) => k === 'Transfer-Encoding' || k === 'Content-Length') || (body?.length ?? 0) > 1_000_000;
  const wellFormed = !framing && method !== 'get';
  const label = `${method} ${path.slice(0, 80)} ctype=${ctype} auth=${auth?.slice(0, 12)} body=${JSON.stringify(body?.slice(0, 40))}`;
  return { label, request: buildRequest(method, path, headers, body), wellFormed, mayWait: framing, route };
}
