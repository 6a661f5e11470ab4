// The dashboard's stylesheet and script, served as files (its CSP allows no inline script or style): the signing
// and claim pages' look, a bar chart, and the few lines that keep the chargers live from the event stream.
import { PAGE_CSS } from './page-kit.ts';

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
input[type=email]{display:block;width:100%;max-width:100%;padding:.5rem;font-size:1rem}`;

/** Live chargers: each `charger` event of /dashboard/stream updates the card of that charger in place. */
export const DASHBOARD_JS = `(() => {
  'use strict';
  const root = document.documentElement;
  // D212: the dashboard's path as the browser knows it (/ere/dashboard behind a proxy at /ere), from this script's own
  // URL (<base>/dashboard/assets/dashboard.js): every fetch, stream and form below goes there, never to a root path
  const me = document.currentScript || document.querySelector('script[src$="/assets/dashboard.js"]');
  const home = new URL('../../dashboard', me.src).pathname;
  const lc = root.lang === 'en' ? 'en' : 'nl';
  const t = {
    nl: { online: 'online', offline: 'offline', charging: 'laadt', idle: 'laadt niet', none: '—', stop: 'Stop laden' },
    en: { online: 'online', offline: 'offline', charging: 'charging', idle: 'not charging', none: '—', stop: 'Stop charging' },
  }[lc];
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
        for (const id of ['session-list', 'energy', 'ere']) {
          const fresh = doc.getElementById(id);
          const old = document.getElementById(id);
          if (fresh && old) old.replaceWith(document.importNode(fresh, true));
        }
        root.dataset.sessionsDrawn = String(Date.now());
      } catch { /* the next event tries again */ } finally { redraw = null; }
    }, 300);
  };
  const actions = (card, c) => {
    const box = card.querySelector('.actions');
    if (!box) return;
    const sid = c.current_session ? c.current_session.id : null;
    let stop = box.querySelector('form[data-role="stop"]');
    if (stop && (!sid || stop.getAttribute('action').indexOf('/sessions/' + sid + '/') < 0)) { stop.remove(); stop = null; }
    if (sid && !stop) { box.prepend(stopForm(sid)); refresh(); }
    const single = card.dataset.connectors === '1';
    box.querySelectorAll('form[data-role="start"]').forEach((f) => { f.hidden = c.status !== 'online' || (sid !== null && single); });
  };
  if (!document.querySelector('[data-charger-id]') || typeof EventSource === 'undefined') return;
  // D109: the stream's keep-alive is an 'alive' event; a stream that errs or goes quiet for longer than two of them
  // (a stalled process, a half-open connection) shows the figures as possibly out of date and is opened again
  const note = document.getElementById('live-note');
  const liveText = note ? note.textContent : '';
  const aliveMs = Math.max(1, Number(note ? note.dataset.aliveSeconds : 15) || 15) * 1000;
  let heard = Date.now();
  const live = (on) => {
    if (on) heard = Date.now();
    root.dataset.live = on ? 'live' : 'stale';
    if (!note) return;
    note.textContent = on ? liveText : note.dataset.staleText;
    note.className = on ? 'meta' : 'meta stale';
  };
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
    set(card, 'status', t[c.status] || c.status, c.status);
    set(card, 'charging', c.is_charging ? t.charging : t.idle);
    // to the Wh, as the meter line below it (kwh_so_far is rounded to two decimals, D108)
    set(card, 'kwh', c.current_session ? kwh.format(c.current_session.wh_so_far / 1000) + ' kWh' : t.none, 'kwh');
    set(card, 'meter', typeof c.latest_meter_wh === 'number' ? kwh.format(c.latest_meter_wh / 1000) + ' kWh' : t.none);
    actions(card, c);
    card.dataset.updated = String(Date.now());
  }
  connect();
})();
`;
