// C7.2 the user dashboard's pages, in Dutch and English: sign-in (e-mail link), the link's confirmation, the
// dashboard itself (chargers live, sessions, monthly kWh, ERE position, personal API tokens) and the page that shows
// a new token once. The stylesheet and script are files (dashboard-assets.ts): the CSP allows nothing inline.
import type { ChargerItem, SessionItem } from '../../domain/charging/personal-views.ts';
import type { PersonalTokenView } from '../../domain/credentials/personal-tokens.ts';
import { STARTABLE, STATION_DOWN, type ConnectorView } from '../../domain/dashboard/connectors.ts';
import type { EnergyOverview } from '../../domain/energy/overview.ts';
import type { ErePosition } from '../../domain/ere/position.ts';
import { humanAmsterdam } from '../../lib/amsterdam-time.ts';
import type { OperatorIdentity } from '../../lib/operator.ts';
import { esc, pageHtml, type PageLocale } from './page-kit.ts';
import { dashboardChart } from './dashboard-chart.ts';
import { statusWord, T } from './dashboard-text.ts';
import type { AccountWithoutIban } from '../../domain/accounts/payout-iban.ts';

/**
 * Where the pages are and whose they are: the operator (the footer) and `base`, the path the service is served under
 * ('' at the root; D212): every link, form and file of the dashboard starts with `${base}/dashboard`.
 */
export interface Site {
  op: OperatorIdentity;
  base: string;
}
const head = (base: string) =>
  `<link rel="stylesheet" href="${esc(base)}/dashboard/assets/dashboard.css">\n<script src="${esc(base)}/dashboard/assets/dashboard.js" defer></script>`;

const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${esc(value)}">`;
const form = (action: string, csrf: string, inner: string, id?: string, role?: string, hide = false) =>
  `<form method="post" action="${esc(action)}"${id ? ` id="${id}"` : ''}${role ? ` data-role="${role}"` : ''}${hide ? ' hidden' : ''}>${hidden('_csrf', csrf)}${inner}</form>`;
const kwh3 = (lc: PageLocale, v: number) => `${new Intl.NumberFormat(lc === 'nl' ? 'nl-NL' : 'en-GB', { minimumFractionDigits: 3, maximumFractionDigits: 3 }).format(v)} kWh`;
const num = (lc: PageLocale, v: number, d = 2) => new Intl.NumberFormat(lc === 'nl' ? 'nl-NL' : 'en-GB', { minimumFractionDigits: d, maximumFractionDigits: d }).format(v);
const when = (lc: PageLocale, iso: string | Date | null) => (iso === null ? '—' : humanAmsterdam(typeof iso === 'string' ? new Date(iso) : iso, lc));

/** D240: the sessions' times without the zone: the session table names it once, in its caption. */
const whenInTable = (lc: PageLocale, iso: string) => when(lc, iso).replace(/ \(CES?T, Europe\/Amsterdam\)$/, '');

/**
 * The frame of every dashboard page: language switch, stylesheet and script files, the operator's footer. D240: the
 * switch stays on the page (`here`: the page's address without its locale, a sign-in link or page 2 of the sessions)
 * rather than going to the dashboard's first page; `skip` puts a skip link first (the dashboard's long page).
 */
export function dashboardFrame(lc: PageLocale, title: string, body: string, site: Site, opts: { here?: string; skip?: boolean } = {}): string {
  const other: PageLocale = lc === 'nl' ? 'en' : 'nl';
  const here = opts.here ?? `${site.base}/dashboard`;
  const switcher = `<a class="lang" href="${esc(`${here}${here.includes('?') ? '&' : '?'}locale=${other}`)}" lang="${other}">${T[other].langName}</a>`;
  const skip = opts.skip ? `<a class="skip" href="#content">${esc(T[lc].skipLink)}</a>\n` : '';
  return pageHtml(lc, title, `${skip}${switcher}\n${body}`, site.op, head(site.base));
}

/**
 * The sign-in form. D240: an error makes the title say so and is announced (role="alert"); an error about the address
 * (`badEmail`) marks the field invalid, ties the message to it, keeps what was typed and puts the focus there.
 */
export function signInPage(
  lc: PageLocale,
  csrf: string,
  site: Site,
  state: { sent?: boolean; sandboxLink?: string | null; error?: string; badEmail?: string } = {},
): string {
  const t = T[lc];
  const sent = state.sent
    ? `<p class="flash" id="link-sent">${esc(t.linkSent)}</p>${state.sandboxLink ? `<p class="meta">${esc(t.sandboxLink)} <a id="sandbox-link" href="${esc(state.sandboxLink)}">${esc(t.openLink)}</a></p>` : ''}`
    : '';
  const error = state.error ? `<p class="error" role="alert" id="error">${esc(state.error)}</p>` : '';
  const bad = state.badEmail !== undefined;
  const input = `<input type="email" id="email" name="email" autocomplete="email" required${bad ? ` value="${esc(state.badEmail!)}" aria-invalid="true" aria-describedby="error" autofocus` : ''}>`;
  return dashboardFrame(
    lc,
    state.error ? t.errorTitle(t.signInTitle) : t.signInTitle,
    `<h1>${esc(t.signInTitle)}</h1><p>${esc(t.signInIntro)}</p>${sent}${error}
${form(`${site.base}/dashboard/sign-in?locale=${lc}`, csrf, `<label for="email">${esc(t.email)}</label>${input}<button type="submit" id="send-link">${esc(t.sendLink)}</button>`)}`,
    site,
  );
}

/**
 * The page a sign-in link opens: a button, never a sign-in by the GET itself. `address` is the one the link signs in
 * to (D234: someone sent another's link sees whose it is), null when the link no longer works (410).
 */
export function confirmSignInPage(lc: PageLocale, token: string, csrf: string, site: Site, address: string | null): string {
  const t = T[lc];
  const body = address
    ? `<h1>${esc(t.confirmTitle)}</h1><p>${esc(t.confirmIntro)}</p><p id="sign-in-as">${esc(t.confirmAs)} <strong>${esc(address)}</strong></p><p class="meta">${esc(t.confirmNotYou)}</p>${form(`${site.base}/dashboard/sign-in/${encodeURIComponent(token)}?locale=${lc}`, csrf, `<button type="submit" id="confirm-sign-in">${esc(t.confirmButton)}</button>`)}`
    : `<h1>${esc(t.linkGoneTitle)}</h1><p class="error" id="link-gone">${esc(t.linkGone)}</p><p><a href="${esc(site.base)}/dashboard?locale=${lc}">${esc(t.askNewLink)}</a></p>`;
  // D240: the language switch opens the same link in the other language (the owner keeps the link's page)
  return dashboardFrame(lc, address ? t.confirmTitle : t.linkGoneTitle, body, site, { here: `${site.base}/dashboard/sign-in/${encodeURIComponent(token)}` });
}

export interface DashboardData {
  email: string;
  csrf: string;
  chargers: ChargerItem[];
  /** per charger id, its connectors (connectors.ts) */
  connectors: Map<string, ConnectorView[]>;
  /** per charger id, the status of the whole charger where it sent one (connector 0, D137) */
  stations?: Map<string, string>;
  sessions: SessionItem[];
  /** which page of the session list this is (1 = the newest), and whether older sessions follow */
  sessionsPage: { page: number; older: boolean };
  energy: EnergyOverview;
  ere: ErePosition;
  tokens: PersonalTokenView[];
  flash?: { text: string; bad: boolean } | undefined;
  /** the user's accounts without an IBAN: each gets a form to give it (D115) */
  withoutIban: AccountWithoutIban[];
  /** how often the live stream sends its `alive` event (STREAM_KEEPALIVE_SECONDS): the page's watchdog (D109) */
  aliveSeconds: number;
  /** per running session id, its connector: the stop button of a charger with several names it (D240) */
  sessionConnectors?: Map<string, number>;
}

function chargerCard(lc: PageLocale, base: string, c: ChargerItem, connectors: ConnectorView[], csrf: string, station: string | undefined, sessionConnector: number | undefined): string {
  const t = T[lc];
  const s = c.current_session;
  // the script (dashboard-assets.ts) keeps these in step with the stream: a stop form while a session runs, a start
  // per connector while the charger is online (hidden on a one-connector charger that is charging)
  // D240: on a charger with several connectors the stop button says which one, as the start buttons do
  const stopText = connectors.length > 1 && sessionConnector !== undefined ? t.stopOn(sessionConnector) : t.stop;
  const stop = s ? form(`${base}/dashboard/sessions/${s.id}/stop?locale=${lc}`, csrf, `<button type="submit" class="stop">${esc(stopText)}</button>`, undefined, 'stop') : '';
  const startHidden = c.status !== 'online' || (s !== undefined && connectors.length === 1);
  // D137: a whole charger that is Faulted or Unavailable starts nothing on any connector
  const down = station !== undefined && STATION_DOWN.has(station);
  const starts = connectors
    .filter((k) => !down && (k.status === null || STARTABLE.has(k.status)))
    .map((k) =>
      form(
        `${base}/dashboard/chargers/${c.id}/start?locale=${lc}`,
        csrf,
        `${hidden('connector_id', String(k.id))}<button type="submit" class="start">${esc(t.start)}${connectors.length > 1 ? ` · ${esc(t.connector)} ${k.id}` : ''}</button>`,
        undefined,
        'start',
        startHidden,
      ),
    )
    .join('');
  const known = connectors.filter((k) => k.status !== null);
  // D240: the OCPP status words in the page's language (an unknown word as the charger sent it)
  const plugs =
    (station !== undefined ? `<dt>${esc(t.station)}</dt><dd><span data-field="station"${down ? ' class="fault"' : ''}>${esc(statusWord(lc, station))}</span></dd>` : '') +
    known.map((k) => `<dt>${esc(t.connector)} ${k.id}</dt><dd>${esc(statusWord(lc, k.status!))}</dd>`).join('');
  // D240: the heading takes the focus (tabindex -1) when the focused stop form goes with its ended session;
  // data-charging is where the script starts from when it announces a start or stop of charging
  return `<article class="card" data-charger-id="${esc(c.id)}" data-connectors="${connectors.length}" data-charging="${c.is_charging ? '1' : '0'}">
<h3 tabindex="-1">${esc(c.nickname)}</h3>
<dl>
<dt>${esc(t.status)}</dt><dd><span data-field="status" class="${c.status}">${esc(t[c.status])}</span> · <span data-field="charging">${esc(c.is_charging ? t.charging : t.idle)}</span></dd>
<dt>${esc(t.kwhSoFar)}</dt><dd><span data-field="kwh" class="kwh">${s ? kwh3(lc, s.wh_so_far / 1000) : '—'}</span></dd>
<dt>${esc(t.meter)}</dt><dd><span data-field="meter">${typeof c.latest_meter_wh === 'number' ? kwh3(lc, c.latest_meter_wh / 1000) : '—'}</span></dd>
${plugs}<dt>${esc(t.mid)}</dt><dd>${esc(c.mid_certified ? t.yes : t.no)}</dd>
</dl>
<div class="actions">${stop}${starts}</div>
</article>`;
}

function sessionsTable(lc: PageLocale, base: string, sessions: SessionItem[], at: DashboardData['sessionsPage'], chargers: ChargerItem[]): string {
  const t = T[lc];
  // ids, so the live redraw puts the focus back on the link that had it (D240)
  const link = (page: number, text: string, rel: string) => `<a id="sessions-${rel}" href="${esc(base)}/dashboard?locale=${lc}&amp;page=${page}#session-list" rel="${rel}">${esc(text)}</a>`;
  const pages = [at.page > 1 ? link(at.page - 1, t.newerSessions, 'prev') : '', at.older ? link(at.page + 1, t.olderSessions, 'next') : ''].filter(Boolean);
  const nav = pages.length ? `<nav class="pages" aria-label="${esc(t.sessionsTitle)}">${pages.join(' · ')}${at.page > 1 ? ` <span class="meta">(${esc(t.page)} ${at.page})</span>` : ''}</nav>` : '';
  if (sessions.length === 0) return `<p>${esc(t.noSessions)}</p>${nav}`;
  // D240: a running session shows the charger card's figure (to the Wh) and the script keeps it in step with the card,
  // so the page never shows two figures for one session; the zone is named once, in the caption
  const live = new Map(chargers.flatMap((c) => (c.current_session ? [[c.current_session.id, c.current_session.wh_so_far] as const] : [])));
  const kwhOf = (s: SessionItem) => {
    const wh = s.ended_at === null ? live.get(s.id) : undefined;
    return wh === undefined ? `${num(lc, s.kwh)} kWh` : `<span data-field="kwh">${kwh3(lc, wh / 1000)}</span>`;
  };
  const rows = sessions
    .map(
      (s) =>
        `<tr${s.ended_at === null ? ` data-session-id="${esc(s.id)}"` : ''}><td>${esc(whenInTable(lc, s.started_at))}<br><span class="meta">${esc(s.charger_nickname)} · ${esc(s.ended_at ? `${t.ended} ${whenInTable(lc, s.ended_at)}` : t.running)}</span></td><td class="n">${kwhOf(s)}<br><span class="meta">${esc(s.counts_for_ere ? t.countsForEre : t.notForEre)}</span></td></tr>`,
    )
    .join('');
  return `<div class="scroll"><table id="sessions"><caption class="meta">${esc(t.timesIn)}</caption><thead><tr><th scope="col">${esc(t.started)}</th><th scope="col" class="n">kWh</th></tr></thead><tbody>${rows}</tbody></table></div>${nav}`;
}

function tokensSection(lc: PageLocale, base: string, tokens: PersonalTokenView[], csrf: string): string {
  const t = T[lc];
  const list = tokens.length
    ? tokens
        .map(
          (k) => `<article class="card token" data-token-id="${esc(k.id)}"><h3>${esc(k.name ?? t.unnamed)}</h3><dl>
<dt>${esc(t.hint)}</dt><dd>${esc(k.hint ?? '—')}</dd><dt>${esc(t.scopes)}</dt><dd>${esc(k.scopes.join(', '))}</dd>
<dt>${esc(t.created)}</dt><dd>${esc(when(lc, k.created_at))}</dd><dt>${esc(t.lastUsed)}</dt><dd>${esc(k.last_used_at ? when(lc, k.last_used_at) : t.never)}</dd></dl>
${form(`${base}/dashboard/tokens/${k.id}/revoke?locale=${lc}`, csrf, `<button type="submit" class="revoke">${esc(t.revoke)}</button>`)}</article>`,
        )
        .join('\n')
    : `<p>${esc(t.noTokens)}</p>`;
  const create = form(
    `${base}/dashboard/tokens?locale=${lc}`,
    csrf,
    `<label for="token-name">${esc(t.tokenName)}</label><input type="text" id="token-name" name="name" maxlength="60" required>
<fieldset><legend>${esc(t.scopes)}</legend><label><input type="checkbox" name="scopes" value="chargers:read" checked> chargers:read — ${esc(t.scopeRead)}</label><label><input type="checkbox" name="scopes" value="chargers:write"> chargers:write — ${esc(t.scopeWrite)}</label></fieldset>
<button type="submit" id="create-token">${esc(t.createToken)}</button>`,
    'token-form',
  );
  return `<section id="tokens"><h2>${esc(t.tokensTitle)}</h2><p class="meta">${esc(t.tokensIntro)}</p>${list}${create}</section>`;
}

/** D115: a form per account of the user's that has no IBAN; nothing when every account has one. */
function payoutSection(lc: PageLocale, base: string, accounts: AccountWithoutIban[], csrf: string, email: string): string {
  if (accounts.length === 0) return '';
  const t = T[lc];
  const forms = accounts
    .map(
      (a) => `<article class="payout" data-account-id="${esc(a.id)}"><p>${esc(t.payoutIntro(a.display_name ?? email))}</p>${form(
        `${base}/dashboard/accounts/${encodeURIComponent(a.id)}/iban?locale=${lc}`,
        csrf,
        `<label for="iban-${esc(a.id)}">${esc(t.ibanLabel)}</label><input id="iban-${esc(a.id)}" name="iban" autocomplete="off" maxlength="42" required><button type="submit" class="save-iban">${esc(t.saveIban)}</button>`,
      )}</article>`,
    )
    .join('');
  return `<section id="payout"><h2>${esc(t.payoutTitle)}</h2>${forms}</section>`;
}

function ereSection(lc: PageLocale, ere: ErePosition): string {
  const t = T[lc];
  const row = (label: string, value: string, id: string) => `<dt>${esc(label)}</dt><dd id="${id}">${esc(value)}</dd>`;
  return `<section id="ere"><h2 tabindex="-1">${esc(t.ereTitle)} ${ere.compliance_year}</h2><dl>
${row(t.ereAllocatable, `${num(lc, ere.allocatable_ere)} ERE (${num(lc, ere.allocatable_kwh)} kWh)`, 'ere-allocatable')}
${row(t.erePending, `${num(lc, ere.pending_ere)} ERE (${num(lc, ere.pending_kwh)} kWh)`, 'ere-pending')}
${row(t.erePaid, `${num(lc, ere.paid.ere)} ERE · € ${num(lc, ere.paid.net_eur)}`, 'ere-paid')}
${row(t.erePayable, `${num(lc, ere.payable.ere)} ERE · € ${num(lc, ere.payable.net_eur)}`, 'ere-payable')}
${row(t.erePrice, `€ ${num(lc, ere.indicative_price_per_ere)}`, 'ere-price')}
</dl></section>`;
}

export function dashboardPage(lc: PageLocale, d: DashboardData, site: Site): string {
  const t = T[lc];
  const { base } = site;
  const flash = d.flash ? `<p class="flash${d.flash.bad ? ' bad' : ''}" id="flash">${esc(d.flash.text)}</p>` : '';
  const chargers = d.chargers.length
    ? d.chargers
        .map((c) => chargerCard(lc, base, c, d.connectors.get(c.id) ?? [{ id: 1, status: null }], d.csrf, d.stations?.get(c.id), c.current_session ? d.sessionConnectors?.get(c.current_session.id) : undefined))
        .join('\n')
    : `<p>${esc(t.noChargers)}</p>`;
  // D240: a skip link past the language switch and the header to the content (#content); the section headings take the
  // focus when the live redraw removes the element that had it; #charging-news is the one polite live region, written
  // by the script only when a charger starts or stops charging; the language switch keeps the page of the list
  const here = d.sessionsPage.page > 1 ? `${base}/dashboard?page=${d.sessionsPage.page}` : `${base}/dashboard`;
  return dashboardFrame(
    lc,
    t.title,
    `<header><h1>${esc(t.title)}</h1><span class="meta">${esc(t.signedInAs)} <span id="user-email">${esc(d.email)}</span> ${form(`${base}/dashboard/sign-out?locale=${lc}`, d.csrf, `<button type="submit" id="sign-out">${esc(t.signOut)}</button>`)}</span></header>
<div id="content" tabindex="-1">
${flash}
${payoutSection(lc, base, d.withoutIban, d.csrf, d.email)}
<section id="chargers"><h2>${esc(t.chargersTitle)}</h2><p class="meta" id="live-note" role="status" data-alive-seconds="${d.aliveSeconds}" data-stale-text="${esc(t.staleNote)}">${esc(t.liveNote)}</p><p class="sr-only" id="charging-news" aria-live="polite"></p>${chargers}</section>
<section id="energy"><h2 tabindex="-1">${esc(t.energyTitle)}</h2>${dashboardChart(lc, d.energy)}</section>
${ereSection(lc, d.ere)}
<section id="session-list"><h2 tabindex="-1">${esc(t.sessionsTitle)}</h2>${sessionsTable(lc, base, d.sessions, d.sessionsPage, d.chargers)}</section>
${tokensSection(lc, base, d.tokens, d.csrf)}
</div>`,
    site,
    { here, skip: true },
  );
}

export function tokenCreatedPage(lc: PageLocale, token: string, name: string, site: Site): string {
  const t = T[lc];
  return dashboardFrame(
    lc,
    t.tokenCreatedTitle,
    `<h1>${esc(t.tokenCreatedTitle)}</h1><p>${esc(t.tokenCreatedIntro)}</p><p><strong>${esc(name)}</strong></p><p class="secret" id="new-token">${esc(token)}</p><p><a href="${esc(site.base)}/dashboard?locale=${lc}" id="back">${esc(t.back)}</a></p>`,
    site,
  );
}

/**
 * D240: the page of a mistyped address under /dashboard (GET or HEAD), in the owner's language with a way back;
 * `path` is the address asked (its path, without the query), so the language switch stays on it.
 */
export function dashboardNotFoundPage(lc: PageLocale, site: Site, path: string): string {
  const t = T[lc];
  return dashboardFrame(
    lc,
    t.notFoundTitle,
    `<h1>${esc(t.notFoundTitle)}</h1><p id="not-found">${esc(t.notFound)}</p><p><a href="${esc(site.base)}/dashboard?locale=${lc}" id="back">${esc(t.toDashboard)}</a></p>`,
    site,
    { here: `${site.base}${path}` },
  );
}
