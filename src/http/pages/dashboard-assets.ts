// The dashboard's stylesheet and script, served as files (its CSP allows no inline script or style): the signing
// and claim pages' look, a bar chart, and the few lines that keep the chargers live from the event stream.
import { PAGE_CSS } from './page-kit.ts';
import { T } from './dashboard-text.ts';

/** D240: the script's words, from the page's (dashboard-text.ts), so a live update says what the server draws. */
const words = (lc: 'nl' | 'en') => ({
  online: T[lc].online,
  offline: T[lc].offline,
  charging: T[lc].charging,
  idle: T[lc].idle,
  none: '—',
  stop: T[lc].stop,
  sending: T[lc].sending,
  started: T[lc].startedCharging('{name}'),
  stopped: T[lc].stoppedCharging('{name}'),
});

export const DASHBOARD_CSS = `${PAGE_CSS}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:baseline;justify-content:space-between}
header form{display:inline}header button{margin-top:0}
section{margin-top:2rem}
.card{border:1px solid #c5ccd6;border-radius:6px;padding:.75rem 1rem;margin:.75rem 0}
.card h3{margin:.25rem 0 .5rem;font-size:1.05rem}
.card form{display:inline-block;margin-right:.5rem}
form[hidden]{display:none}
.online{color:#1b7a34;font-weight:600}.offline,.fault{color:#a4001c;font-weight:600}
.stale{color:#a4001c;font-weight:600}
.kwh{font-size:1.4rem;font-weight:700;font-variant-numeric:tabular-nums}
.flash{border-left:4px solid #1b7a34;background:#f1f8f3;padding:.25rem 1rem}
.flash.bad{border-left-color:#a4001c;background:#fcf1f3}
.secret{font-family:ui-monospace,monospace;background:#f7f9fb;border:1px solid #c5ccd6;padding:.5rem;word-break:break-all}
table{width:100%;border-collapse:collapse;font-size:.95rem}th,td{text-align:left;padding:.3rem .4rem;border-bottom:1px solid #e3e7ec;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto}
svg.chart{width:100%;height:auto;display:block}
svg.chart{max-width:36rem}svg.chart rect{fill:#1d5fbf}svg.chart text{font-size:10px;fill:#53606f}
fieldset{border:1px solid #c5ccd6;border-radius:6px;margin:.75rem 0}
input[type=email]{display:block;width:100%;max-width:100%;padding:.5rem;font-size:1rem}
caption{text-align:left;caption-side:top;padding:.25rem 0}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
.skip{position:absolute;left:-10000px;top:auto}.skip:focus{position:static;display:inline-block;margin:0 0 .5rem;padding:.25rem .5rem;background:#f2f6fc;border:2px solid #1d5fbf}
#content:focus{outline:none}`;

/** Live chargers: each `charger` event of /dashboard/stream updates the card of that charger in place. */
export const DASHBOARD_JS = `(() => {
  'use strict';
  const root = document.documentElement;
  // D212: the dashboard's path as the browser knows it (/ere/dashboard behind a proxy at /ere), from this script's own
  // URL (<base>/dashboard/assets/dashboard.js): every fetch, stream and form below goes there, never to a root path
  const me = document.currentScript || document.querySelector('script[src$="/assets/dashboard.js"]');
  const home = new URL('../../dashboard', me.src).pathname;
  const lc = root.lang === 'en' ? 'en' : 'nl';
  const t = ${JSON.stringify({ nl: words('nl'), en: words('en') })}[lc];
  // D240: the sign-in button says it is sending once pressed, and a second press sends nothing more (it keeps the
  // focus: aria-disabled rather than disabled); back from the browser's cache it is the button again
  const sendLink = document.getElementById('send-link');
  if (sendLink && sendLink.form) {
    const label = sendLink.textContent;
    let sending = false;
    sendLink.form.addEventListener('submit', (e) => {
      if (sending) { e.preventDefault(); return; }
      sending = true;
      sendLink.setAttribute('aria-disabled', 'true');
      sendLink.setAttribute('aria-busy', 'true');
      sendLink.textContent = t.sending;
    });
    window.addEventListener('pageshow', (e) => {
      if (!e.persisted) return;
      sending = false;
      sendLink.removeAttribute('aria-disabled');
      sendLink.removeAttribute('aria-busy');
      sendLink.textContent = label;
    });
  }
  const kwh = new Intl.NumberFormat(lc === 'nl' ? 'nl-NL' : 'en-GB', { minimumFractionDigits: 3, maximumFractionDigits: 3 });
  const set = (card, field, text, cls) => {
    const el = card.querySelector('[data-field="' + field + '"]');
    if (!el) return;
    el.textContent = text;
    if (cls !== undefined) el.className = cls;
  };
  const csrf = document.querySelector('input[name="_csrf"]');
  /** the stop form of a session that started after the page was drawn (the same form the server draws) */
  const stopForm = (sid) => {
    const f = document.createElement('form');
    f.method = 'post';
    f.action = home + '/sessions/' + encodeURIComponent(sid) + '/stop?locale=' + lc;
    f.dataset.role = 'stop';
    const i = document.createElement('input');
    i.type = 'hidden'; i.name = '_csrf'; i.value = csrf ? csrf.value : '';
    const b = document.createElement('button');
    b.type = 'submit'; b.className = 'stop'; b.textContent = t.stop;
    f.append(i, b);
    return f;
  };
  /** when a session starts or ends, the sections drawn from the sessions (the list, the chart, the ERE position)
   *  are fetched again and swapped in, drawn by the server as on a load */
  let redraw = null;
  const refresh = () => {
    if (redraw !== null) return;
    redraw = setTimeout(async () => {
      try {
        // the same page of the session list as the one shown (?page=)
        const q = new URLSearchParams(location.search);
        q.set('locale', lc);
        const res = await fetch(home + '?' + q, { credentials: 'same-origin', headers: { accept: 'text/html' } });
        if (!res.ok) return;
        const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
        // D240: the owner keeps their place: an opened table stays open, and the focus goes back to the same element
        // (by id) when it was in a section drawn again, or to that section's heading when the element is gone
        const open = new Set(Array.from(document.querySelectorAll('details[id]')).filter((d) => d.open).map((d) => d.id));
        const focused = document.activeElement;
        let focusIn = null;
        for (const id of ['session-list', 'energy', 'ere']) {
          const fresh = doc.getElementById(id);
          const old = document.getElementById(id);
          if (!fresh || !old) continue;
          if (focused && old.contains(focused)) focusIn = id;
          old.replaceWith(document.importNode(fresh, true));
        }
        open.forEach((id) => { const d = document.getElementById(id); if (d && d.tagName === 'DETAILS') d.open = true; });
        if (focusIn !== null) {
          const same = focused.id ? document.getElementById(focused.id) : null;
          const section = document.getElementById(focusIn);
          const to = same || (section && section.querySelector('h2'));
          if (to) to.focus({ preventScroll: true });
        }
        // the server names the connector on a stop button of a charger with several (D240): the form this script drew
        // takes the server's words
        document.querySelectorAll('[data-charger-id] form[data-role="stop"]').forEach((f) => {
          const drawn = Array.from(doc.querySelectorAll('form[data-role="stop"]')).find((g) => g.getAttribute('action') === f.getAttribute('action'));
          const b = f.querySelector('button');
          const text = drawn && drawn.querySelector('button') ? drawn.querySelector('button').textContent : null;
          if (b && text && b.textContent !== text) b.textContent = text;
        });
        root.dataset.sessionsDrawn = String(Date.now());
      } catch { /* the next event tries again */ } finally { redraw = null; }
    }, 300);
  };
  const actions = (card, c) => {
    const box = card.querySelector('.actions');
    if (!box) return;
    const focused = box.contains(document.activeElement) ? document.activeElement : null;
    const sid = c.current_session ? c.current_session.id : null;
    let stop = box.querySelector('form[data-role="stop"]');
    if (stop && (!sid || stop.getAttribute('action').indexOf('/sessions/' + sid + '/') < 0)) { stop.remove(); stop = null; }
    if (sid && !stop) { box.prepend(stopForm(sid)); refresh(); }
    const single = card.dataset.connectors === '1';
    box.querySelectorAll('form[data-role="start"]').forEach((f) => { f.hidden = c.status !== 'online' || (sid !== null && single); });
    // D240: a focused button that went (the stop of an ended session) or was hidden leaves the focus on the card: its
    // stop button when there is one, else its heading, never <body>
    if (focused && (!focused.isConnected || focused.closest('form[hidden]'))) {
      const next = box.querySelector('form[data-role="stop"] button') || card.querySelector('h3');
      if (next) next.focus({ preventScroll: true });
    }
  };
  if (!document.querySelector('[data-charger-id]') || typeof EventSource === 'undefined') return;
  // D109: the stream's keep-alive is an 'alive' event; a stream that errs or goes quiet for longer than two of them
  // (a stalled process, a half-open connection) shows the figures as possibly out of date and is opened again
  const note = document.getElementById('live-note');
  const liveText = note ? note.textContent : '';
  const aliveMs = Math.max(1, Number(note ? note.dataset.aliveSeconds : 15) || 15) * 1000;
  let heard = Date.now();
  let state = null;
  const live = (on) => {
    if (on) heard = Date.now();
    // D240: the note is a status region: it is written only when the state changes, not at every event (a screen
    // reader would speak the same sentence at every MeterValues and keep-alive)
    if (state === on) return;
    state = on;
    root.dataset.live = on ? 'live' : 'stale';
    if (!note) return;
    const text = on ? liveText : note.dataset.staleText;
    if (note.textContent !== text) note.textContent = text;
    note.className = on ? 'meta' : 'meta stale';
  };
  // D240: the one polite live region: it speaks when a charger starts or stops charging, not at every kWh
  const news = document.getElementById('charging-news');
  let es = null;
  const connect = () => {
    es = new EventSource(home + '/stream');
    es.onopen = () => live(true);
    es.onerror = () => { if (es.readyState !== 1) live(false); };
    es.addEventListener('alive', () => live(true));
    es.addEventListener('charger', onCharger);
    es.addEventListener('session', () => { live(true); root.dataset.sessionEnded = String(Date.now()); refresh(); });
  };
  setInterval(() => {
    if (es.readyState === 1 && Date.now() - heard > 2.5 * aliveMs) { live(false); es.close(); connect(); }
  }, Math.min(5000, aliveMs));
  function onCharger(e) {
    live(true);
    let c;
    try { c = JSON.parse(e.data); } catch { return; }
    const card = document.querySelector('[data-charger-id="' + c.id + '"]');
    if (!card) return;
    set(card, 'status', c.status === 'online' || c.status === 'offline' ? t[c.status] : String(c.status), c.status);
    set(card, 'charging', c.is_charging ? t.charging : t.idle);
    const charging = c.is_charging ? '1' : '0';
    if (card.dataset.charging !== charging) {
      card.dataset.charging = charging;
      const name = card.querySelector('h3') ? card.querySelector('h3').textContent : '';
      if (news) news.textContent = (c.is_charging ? t.started : t.stopped).replace('{name}', name);
    }
    // to the Wh, as the meter line below it (kwh_so_far is rounded to two decimals, D108)
    const now = c.current_session ? kwh.format(c.current_session.wh_so_far / 1000) + ' kWh' : t.none;
    set(card, 'kwh', now, 'kwh');
    // D240: the session list's row of the running session shows the same figure
    if (c.current_session) {
      const row = document.querySelector('#session-list tr[data-session-id="' + c.current_session.id + '"] [data-field="kwh"]');
      if (row) row.textContent = now;
    }
    set(card, 'meter', typeof c.latest_meter_wh === 'number' ? kwh.format(c.latest_meter_wh / 1000) + ' kWh' : t.none);
    actions(card, c);
    card.dataset.updated = String(Date.now());
  }
  connect();
})();
`;
