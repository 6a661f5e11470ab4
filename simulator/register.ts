// --register: creates the simulated chargers' identities on OUR gateway through its HTTP API, so a fleet can
// connect with real credentials. Personal API (`POST /chargers`, C4.9) with a personal token; with an admin
// token a throwaway owner and a personal token are created first through the admin API (C1.6).
// A 429 is waited out (Retry-After), so a rate-limited gateway only slows registration down.

export interface Credential {
  identity: string;
  password: string | undefined;
}

export interface RegisterOptions {
  /** the gateway's HTTP base, e.g. http://localhost:8080 */
  apiUrl: string;
  identities: string[];
  token?: string | undefined;
  adminToken?: string | undefined;
  concurrency?: number;
  nicknamePrefix?: string;
  log?: (line: string) => void;
}

/** ws://host:port/ocpp → http://host:port (the service shares one port, C0.3) */
export function apiUrlFromOcppUrl(url: string): string {
  const u = new URL(url);
  u.protocol = u.protocol === 'wss:' ? 'https:' : 'http:';
  u.pathname = u.pathname.replace(/\/ocpp\/?$/, '') || '/';
  u.search = '';
  return u.toString().replace(/\/$/, '');
}

async function request(apiUrl: string, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; json: any }> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(apiUrl + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let json: any = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = { raw: text };
    }
    if (res.status === 429 && attempt < 30) {
      const wait = Number(res.headers.get('retry-after') ?? json?.retry_after_seconds ?? 1);
      await new Promise((r) => setTimeout(r, Math.max(0.2, wait) * 1000));
      continue;
    }
    return { status: res.status, json };
  }
}

/** create an owner with a personal token through the admin API */
export async function ownerTokenFromAdmin(apiUrl: string, adminToken: string): Promise<string> {
  const email = `simulator-${Date.now()}-${Math.floor(Math.random() * 1e6)}@simulator.invalid`;
  const user = await request(apiUrl, 'POST', '/admin/users', adminToken, { email, full_name: 'Charge-point simulator' });
  if (user.status !== 201 && user.status !== 200) throw new Error(`POST /admin/users → ${user.status} ${JSON.stringify(user.json)}`);
  const tok = await request(apiUrl, 'POST', `/admin/users/${encodeURIComponent(user.json.user_id)}/api-tokens`, adminToken, {
    scopes: ['chargers:read', 'chargers:write'],
  });
  if (tok.status !== 201 && tok.status !== 200) throw new Error(`POST /admin/users/:id/api-tokens → ${tok.status} ${JSON.stringify(tok.json)}`);
  return String(tok.json.token);
}

export async function registerChargers(opts: RegisterOptions): Promise<{ credentials: Credential[]; token: string }> {
  let token = opts.token;
  if (!token) {
    if (!opts.adminToken) throw new Error('--register needs --token (a personal token with chargers:write) or --admin-token');
    token = await ownerTokenFromAdmin(opts.apiUrl, opts.adminToken);
  }
  const out: Credential[] = new Array(opts.identities.length);
  let next = 0;
  const worker = async () => {
    while (next < opts.identities.length) {
      const i = next++;
      const identity = opts.identities[i]!;
      const res = await request(opts.apiUrl, 'POST', '/chargers', token!, {
        nickname: `${opts.nicknamePrefix ?? 'Simulated'} ${identity}`.slice(0, 100),
        connection_type: 'ocpp',
        ocpp_identity: identity,
      });
      if (res.status !== 201) throw new Error(`POST /chargers ${identity} → ${res.status} ${JSON.stringify(res.json)}`);
      out[i] = { identity: String(res.json?.ocpp?.identity ?? identity), password: res.json?.ocpp?.password };
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency ?? 4, opts.identities.length)) }, worker));
  opts.log?.(`registered ${out.length} charger(s)`);
  return { credentials: out, token };
}
