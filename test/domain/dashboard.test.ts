// C7.2 the dashboard's domain: sign-in links (only for a user's address, at most 5 per 15 minutes, used once, 15
// minutes), sessions (30 days, ended by signing out, only hashes kept), several named personal tokens (a cap, scopes
// checked, revoked one by one, their last use noted) beside the operator's endpoint that still replaces them all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aUser } from '../helpers/factories.ts';
import { requestSignInLink, sessionOf, signIn, signOut } from '../../src/domain/dashboard/sign-in.ts';
import { connectorsOf } from '../../src/domain/dashboard/connectors.ts';
import { createPersonalToken, listPersonalTokens, MAX_TOKENS, revokePersonalToken } from '../../src/domain/credentials/personal-tokens.ts';
import { mintPersonalToken, resolveBearer } from '../../src/domain/credentials/tokens.ts';

const clock = testClock('2026-11-22T10:00:00Z');
let svc: TestService;
beforeAll(async () => {
  svc = await createTestService({ clock });
});
afterAll(async () => {
  await svc.close();
});

const tokenOf = (url: string) => /\/dashboard\/sign-in\/([A-Za-z0-9_-]+)/.exec(url)![1]!;
const mailsTo = (email: string) => svc.deps.db.selectFrom('outbox_messages').select(['subject', 'body']).where('to_email', '=', email).execute();
const codeOf = (p: Promise<unknown>) => p.then(() => 'none', (e: { code?: string }) => e.code ?? String(e));

describe('sign-in links', () => {
  it('are sent only to a user\'s address (any case), through the outbox, in the chosen language', async () => {
    const u = await aUser(svc.deps);
    expect(await requestSignInLink(svc.deps, `nobody-${Date.now()}@example.nl`, 'nl')).toBeNull();
    const url = await requestSignInLink(svc.deps, u.email.toUpperCase(), 'en');
    expect(url).toMatch(/\/dashboard\/sign-in\/[A-Za-z0-9_-]{43}\?locale=en$/);
    const mails = await mailsTo(u.email);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe('Sign in to your dashboard');
    expect(mails[0]!.body).toContain(url!);
    expect(await codeOf(requestSignInLink(svc.deps, 'not an address', 'nl'))).toBe('invalid_request');
  });

  it('are sent at most 5 times per 15 minutes per address (the answer does not change)', async () => {
    const u = await aUser(svc.deps);
    for (let i = 0; i < 5; i++) expect(await requestSignInLink(svc.deps, u.email, 'nl')).not.toBeNull();
    expect(await requestSignInLink(svc.deps, u.email, 'nl')).toBeNull();
    expect(await mailsTo(u.email)).toHaveLength(5);
    clock.advance(15 * 60_000 + 1000);
    expect(await requestSignInLink(svc.deps, u.email, 'nl')).not.toBeNull();
  });

  it('open a session once, within 15 minutes; the session lasts 30 days and ends on sign-out', async () => {
    const u = await aUser(svc.deps);
    const first = tokenOf((await requestSignInLink(svc.deps, u.email, 'nl'))!);
    const late = tokenOf((await requestSignInLink(svc.deps, u.email, 'nl'))!);
    const s = await signIn(svc.deps, first);
    expect(await codeOf(signIn(svc.deps, first))).toBe('sign_in_link_invalid');
    const open = await sessionOf(svc.deps, s.cookie);
    expect(open).toMatchObject({ userId: u.userId, email: u.email });
    expect(open!.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = await svc.deps.db.selectFrom('dashboard_sessions').select('token_hash').where('id', '=', open!.id).executeTakeFirstOrThrow();
    expect(stored.token_hash).not.toBe(s.cookie);
    expect(s.expiresAt.getTime() - clock().getTime()).toBe(30 * 86_400_000);

    clock.advance(15 * 60_000 + 1);
    expect(await codeOf(signIn(svc.deps, late))).toBe('sign_in_link_invalid');
    expect(await codeOf(signIn(svc.deps, 'x'.repeat(43)))).toBe('sign_in_link_invalid');

    clock.advance(30 * 86_400_000 - 15 * 60_000);
    expect(await sessionOf(svc.deps, s.cookie)).toBeNull();
    clock.advance(-30 * 86_400_000);

    await signOut(svc.deps, open!.id);
    expect(await sessionOf(svc.deps, s.cookie)).toBeNull();
    expect(await sessionOf(svc.deps, undefined)).toBeNull();
    expect(await sessionOf(svc.deps, 'y'.repeat(500))).toBeNull();
  });
});

it('drops a user\'s stale links and ended sessions when new ones are made', async () => {
  const u = await aUser(svc.deps);
  const first = await signIn(svc.deps, tokenOf((await requestSignInLink(svc.deps, u.email, 'nl'))!));
  await signOut(svc.deps, (await sessionOf(svc.deps, first.cookie))!.id);
  clock.advance(2 * 86_400_000);
  const second = await signIn(svc.deps, tokenOf((await requestSignInLink(svc.deps, u.email, 'nl'))!));
  const rows = (table: 'dashboard_sign_in_links' | 'dashboard_sessions') => svc.deps.db.selectFrom(table).select('id').where('user_id', '=', u.userId).execute();
  expect(await rows('dashboard_sign_in_links')).toHaveLength(1);
  expect(await rows('dashboard_sessions')).toHaveLength(1);
  expect(await sessionOf(svc.deps, second.cookie)).not.toBeNull();
});

describe('personal tokens', () => {
  it('a user holds several named tokens, each revoked alone; the cap and the scopes are checked', async () => {
    const u = await aUser(svc.deps); // the operator's token (C1.6) is one of them
    const other = await aUser(svc.deps);
    const made = [];
    for (let i = 1; i < MAX_TOKENS; i++) made.push(await createPersonalToken(svc.deps, u.userId, { name: `App ${i}`, scopes: ['chargers:read'] }));
    expect(await codeOf(createPersonalToken(svc.deps, u.userId, { name: 'one too many', scopes: ['chargers:read'] }))).toBe('too_many_tokens');
    expect(await codeOf(createPersonalToken(svc.deps, other.userId, { name: 'x', scopes: ['cpo:accounts:write'] }))).toBe('invalid_request');
    expect(await codeOf(createPersonalToken(svc.deps, other.userId, { name: '  ', scopes: ['chargers:read'] }))).toBe('invalid_request');
    expect(await codeOf(createPersonalToken(svc.deps, other.userId, { name: 'x', scopes: [] }))).toBe('invalid_request');

    const list = await listPersonalTokens(svc.deps, u.userId);
    expect(list).toHaveLength(MAX_TOKENS);
    const app1 = list.find((t) => t.name === 'App 1')!;
    expect(app1.hint).toContain(made[0]!.token.slice(-4));
    expect(app1.scopes).toEqual(['chargers:read']);

    // another user cannot revoke it; its owner can, and only that one stops working
    expect(await codeOf(revokePersonalToken(svc.deps, other.userId, made[0]!.id))).toBe('token_not_found');
    await revokePersonalToken(svc.deps, u.userId, made[0]!.id);
    expect(await codeOf(revokePersonalToken(svc.deps, u.userId, made[0]!.id))).toBe('token_not_found');
    expect(await resolveBearer(svc.deps, made[0]!.token)).toBeNull();
    expect(await resolveBearer(svc.deps, made[1]!.token)).toMatchObject({ kind: 'personal', userId: u.userId });
    expect(await resolveBearer(svc.deps, u.token)).toMatchObject({ kind: 'personal', userId: u.userId });

    // the operator's endpoint keeps its meaning: a new token replaces all of the user's tokens
    const fresh = await mintPersonalToken(svc.deps, u.userId, ['chargers:read']);
    expect(await resolveBearer(svc.deps, made[1]!.token)).toBeNull();
    expect(await resolveBearer(svc.deps, fresh.token)).not.toBeNull();
    expect(await listPersonalTokens(svc.deps, u.userId)).toHaveLength(1);
  });

  it('notes a token\'s last use', async () => {
    const u = await aUser(svc.deps);
    const t = await createPersonalToken(svc.deps, u.userId, { name: 'Meter', scopes: ['chargers:read'] });
    expect((await listPersonalTokens(svc.deps, u.userId)).find((x) => x.id === t.id)!.last_used_at).toBeNull();
    await resolveBearer(svc.deps, t.token);
    await expect.poll(async () => (await listPersonalTokens(svc.deps, u.userId)).find((x) => x.id === t.id)!.last_used_at, { timeout: 5000 }).not.toBeNull();
  });
});

it('a charger that never reported its connectors has connector 1', async () => {
  const map = await connectorsOf(svc.deps, ['00000000-0000-4000-8000-000000000000']);
  expect(map.get('00000000-0000-4000-8000-000000000000')).toEqual([{ id: 1, status: null }]);
  expect((await connectorsOf(svc.deps, [])).size).toBe(0);
});
