// The dashboard's chart of monthly kWh (C7.2): an SVG drawn on the server from GET /energy's months (the last 12,
// oldest left), every charger's kWh; no script, and a table of the same figures for screen readers.
import type { EnergyOverview } from '../../domain/energy/overview.ts';
import { esc, type PageLocale } from './page-kit.ts';
import { T } from './dashboard-text.ts';

// drawn in a 360 × 200 box: on a phone the labels stay readable, on a wider screen the chart scales up
const W = 360;
const H = 200;
const PAD = { left: 4, right: 4, top: 20, bottom: 24 };

export function dashboardChart(lc: PageLocale, energy: EnergyOverview): string {
  const months = energy.months.slice(0, 12).reverse();
  if (months.length === 0 || months.every((m) => m.kwh_all === 0)) return `<p id="energy-none">${esc(T[lc].noEnergy)}</p>`;
  const max = Math.max(1, ...months.map((m) => m.kwh_all));
  const slot = (W - PAD.left - PAD.right) / months.length;
  const bar = Math.max(4, slot * 0.7);
  // a bar's label is short (one decimal); its title and the table give the figures as the API does (two, D108)
  const fmt = new Intl.NumberFormat(lc === 'nl' ? 'nl-NL' : 'en-GB', { maximumFractionDigits: 1 });
  const fmt2 = new Intl.NumberFormat(lc === 'nl' ? 'nl-NL' : 'en-GB', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  // D240: months as the page's language names them ("okt 2026" under a bar, "oktober 2026" in the table), not 2026-10
  const monthDate = (m: string) => new Date(Date.UTC(Number(m.slice(0, 4)), Number(m.slice(5, 7)) - 1, 15));
  const locale = lc === 'nl' ? 'nl-NL' : 'en-GB';
  const short = new Intl.DateTimeFormat(locale, { month: 'short', timeZone: 'UTC' });
  const long = new Intl.DateTimeFormat(locale, { month: 'long', year: 'numeric', timeZone: 'UTC' });
  const named = (m: string) => long.format(monthDate(m));
  const bars = months
    .map((m, i) => {
      const h = ((H - PAD.top - PAD.bottom) * m.kwh_all) / max;
      const x = PAD.left + i * slot + (slot - bar) / 2;
      const y = H - PAD.bottom - h;
      return `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${bar.toFixed(1)}" height="${h.toFixed(1)}"><title>${esc(named(m.month))}: ${fmt2.format(m.kwh_all)} kWh</title></rect>
<text x="${(x + bar / 2).toFixed(1)}" y="${(y - 4).toFixed(1)}" text-anchor="middle">${fmt.format(m.kwh_all)}</text>
<text x="${(x + bar / 2).toFixed(1)}" y="${H - 8}" text-anchor="middle">${esc(short.format(monthDate(m.month)))}</text>`;
    })
    .join('\n');
  const rows = months.map((m) => `<tr><th scope="row">${esc(named(m.month))}</th><td class="n">${fmt2.format(m.kwh_all)}</td><td class="n">${fmt2.format(m.kwh)}</td></tr>`).join('');
  // D240: the image's name says what it shows, with its figures (role="img" hides the bars' titles); the summary says
  // it opens a table; the details and its summary have ids, so the live redraw keeps them open and focused
  const figures = months.map((m) => `${named(m.month)} ${fmt2.format(m.kwh_all)} kWh`).join('; ');
  return `<svg class="chart" id="energy-chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(T[lc].chartLabel(figures))}">${bars}</svg>
<details id="energy-details"><summary id="energy-summary">${esc(T[lc].chartTable)}</summary><div class="scroll"><table id="energy-table"><thead><tr><th scope="col">${esc(T[lc].month)}</th><th scope="col" class="n">kWh</th><th scope="col" class="n">ERE kWh</th></tr></thead><tbody>${rows}</tbody></table></div></details>`;
}
