// The HTTP side of the fuzzer: malformed upgrade requests and malformed requests on every route that
// GET /openapi.json documents (plus the undocumented /docs and /openapi.json), two at a time each, checking
// every answer: no hang, no 5xx, and every error in the {error, detail} JSON shape (or the 429 shape).
import crypto from 'node:crypto';
import { httpCase, upgradeCase, type EdgeCase, type RouteSpec } from './edge-gen.ts';
import type { Finding } from './lanes.ts';
import type { Prng } from './prng.ts';
import { rawExchange, type RawResponse } from './raw-http.ts';

export interface EdgeRun {
  url: string;
  r: Prng;
  upgradeCases: number;
  httpCases: number;
  upgradeChargers: Array<{ identity: string; password: string }>;
  tokens: { admin: string; personal: string };
  findings: Finding[];
  alive: () => boolean;
}

const HANG_MS = 15_000;

export async function routesOf(url: string): Promise<RouteSpec[]> {
  const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, unknown> }> }>> };
  const out: RouteSpec[] = [{ method: 'GET', path: '/docs', html: true }, { method: 'GET', path: '/openapi.json', html: false }];
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(ops)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(m)) continue;
      const html = Object.values(op.responses ?? {}).some((x) => Object.keys(x.content ?? {}).some((c) => c.includes('html')));
      out.push({ method: m.toUpperCase(), path: p, html });
    }
  }
  return out;
}

export async function runEdgeFuzz(run: EdgeRun): Promise<{ upgrades: number; http: number; statuses: Record<string, number> }> {
  const port = Number(new URL(run.url).port);
  const routes = await routesOf(run.url);
  const statuses: Record<string, number> = {};
  const count = (kind: string, s: number) => (statuses[`${kind} ${s}`] = (statuses[`${kind} ${s}`] ?? 0) + 1);
  const rU = run.r.fork(1);
  const rH = run.r.fork(2);
  const upgrades: Array<EdgeCase & { authOk: boolean }> = Array.from({ length: run.upgradeCases }, () => upgradeCase(rU, run.upgradeChargers));
  const https = Array.from({ length: run.httpCases }, () => httpCase(rH, routes, run.tokens));
  let dead = false;
  const worker = async <T extends EdgeCase>(list: T[], kind: string, check: (c: T, res: RawResponse) => string | null) => {
    while (list.length && !dead) {
      const c = list.shift()!;
      const res = await rawExchange(port, c.request, { timeoutMs: c.mayWait ? 1000 : HANG_MS, halfSend: c.halfSend ?? false });
      if (!c.halfSend) count(kind, res.status);
      if (!run.alive()) {
        dead = true;
        run.findings.push({ kind: 'process-exited', input: `${kind}: ${c.label}`, symptom: 'the service process exited during or right after this request' });
        return;
      }
      if (c.halfSend || c.mayWait) continue;
      if (res.hung) { run.findings.push({ kind: 'hang', input: `${kind}: ${c.label}`, symptom: `no answer and no close within ${HANG_MS} ms` }); continue; }
      const problem = check(c, res);
      if (problem) run.findings.push({ kind: `${kind}-answer`, input: `${kind}: ${c.label}`, symptom: problem });
    }
  };
  const upgradeCheck = (c: EdgeCase & { authOk: boolean }, res: RawResponse) => {
    if (res.status === 101 && !c.authOk) return 'upgraded (101) without the charger\'s valid credentials';
    if (res.status >= 500 && res.status !== 503) return `answered ${res.status}`;
    return null;
  };
  const httpCheck = (c: EdgeCase & { route: RouteSpec }, res: RawResponse) => {
    if (res.status >= 500) return `answered ${res.status} ${res.body.slice(0, 200)}`;
    // a request that is not HTTP may be closed without an answer; whatever is answered is in the shape (D89)
    if (res.status === 0) return c.wellFormed ? 'the connection closed without an answer' : null;
    if (res.status < 400 || c.request.toString('latin1', 0, 5).startsWith('HEAD')) return null;
    const ctype = res.headers['content-type'] ?? '';
    if (c.route.html && ctype.includes('text/html')) return null;
    return errorShape(res);
  };
  await Promise.all([
    worker(upgrades, 'upgrade', upgradeCheck), worker(upgrades, 'upgrade', upgradeCheck),
    worker(https, 'http', httpCheck), worker(https, 'http', httpCheck),
  ]);
  return { upgrades: run.upgradeCases, http: run.httpCases, statuses };
}

/** C6.1: {error: string, detail?: string}; C1.5: 429 {error: "Too many requests", retry_after_seconds} */
function errorShape(res: RawResponse): string | null {
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    return `${res.status} with a body that is not JSON (${res.headers['content-type']}): ${JSON.stringify(res.body.slice(0, 120))}`;
  }
  const b = body as { error?: unknown; detail?: unknown; retry_after_seconds?: unknown };
  if (typeof b?.error !== 'string') return `${res.status} without a string "error": ${res.body.slice(0, 200)}`;
  if (b.detail !== undefined && typeof b.detail !== 'string') return `${res.status} with a non-string "detail": ${res.body.slice(0, 200)}`;
  if (res.status === 429 && typeof b.retry_after_seconds !== 'number') return `429 without retry_after_seconds: ${res.body.slice(0, 200)}`;
  // nothing beyond what the interface adds to some errors (fastify's own {code, message, statusCode} passed before D84)
  const extra = Object.keys(b).filter((k) => !['error', 'detail', 'retry_after_seconds', 'required_scope', 'message'].includes(k));
  if (extra.length > 0) return `${res.status} with fields the interface does not have (${extra.join(', ')}): ${res.body.slice(0, 200)}`;
  return null;
}

export const randomKey = () => crypto.randomBytes(16).toString('base64');
