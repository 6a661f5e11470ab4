// The dashboard's monthly kWh chart (C7.2): the last 12 months oldest first, bars in proportion, the figures also in
// a table; nothing drawn when no energy was charged.
import { describe, expect, it } from 'vitest';
import { dashboardChart } from '../../src/http/pages/dashboard-chart.ts';
import type { EnergyOverview } from '../../src/domain/energy/overview.ts';

const overview = (kwh: number[]): EnergyOverview => ({
  total_kwh: 0,
  total_ere_credits: 0,
  total_sessions: 0,
  total_kwh_all: 0,
  total_sessions_all: 0,
  // newest first, as GET /energy gives them
  months: kwh.map((k, i) => ({ month: `2026-${String(12 - i).padStart(2, '0')}`, kwh: k / 2, ere_credits: 0, sessions: 1, kwh_all: k, sessions_all: 1 })),
});

describe('dashboardChart', () => {
  it('draws one bar per month, oldest first, heights in proportion to the kWh', () => {
    const svg = dashboardChart('nl', overview([300, 150, 75]));
    const heights = [...svg.matchAll(/<rect [^>]*height="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(heights).toHaveLength(3);
    expect(heights[2]! / heights[0]!).toBeCloseTo(4, 1); // 300 kWh (December, last) vs 75 kWh (October, first)
    expect(heights[1]! / heights[0]!).toBeCloseTo(2, 1);
    expect(svg.indexOf('oktober 2026')).toBeLessThan(svg.indexOf('december 2026'));
    expect(svg).toContain('<td class="n">150,00</td><td class="n">75,00</td>'); // the table: all chargers, and what counts for ERE; two decimals, as the API gives them (D108)
  });

  it('keeps to the last 12 months and says so when nothing was charged', () => {
    expect([...dashboardChart('en', overview(Array.from({ length: 14 }, () => 10))).matchAll(/<rect /g)]).toHaveLength(12);
    expect(dashboardChart('en', overview([0, 0]))).toContain('energy-none');
    expect(dashboardChart('en', overview([]))).toContain('No energy charged yet.');
  });

  it('D240: names the image with its figures, says the summary opens a table, and names the months in the page\'s language', () => {
    const nl = dashboardChart('nl', overview([300, 150, 75]));
    expect(nl).toContain('role="img" aria-label="Staafdiagram van de kWh per maand: oktober 2026 75,00 kWh; november 2026 150,00 kWh; december 2026 300,00 kWh. Dezelfde cijfers staan in de tabel eronder."');
    expect(nl).toContain('<summary id="energy-summary">Tabel met kWh per maand</summary>');
    expect(nl).toContain('<th scope="col">Maand</th>');
    expect(nl).toContain('<th scope="row">oktober 2026</th><td class="n">75,00</td>');
    expect(nl).toMatch(/text-anchor="middle">okt\.?<\/text>/); // under the bar, not "10"
    expect(nl).not.toContain('2026-10');
    const en = dashboardChart('en', overview([300, 150, 75]));
    expect(en).toContain('<summary id="energy-summary">Table of kWh per month</summary>');
    expect(en).toContain('<th scope="col">Month</th>');
    expect(en).toContain('<th scope="row">October 2026</th>');
    expect(en).toMatch(/text-anchor="middle">Oct<\/text>/);
    expect(en).toContain('aria-label="Bar chart of the kWh per month: October 2026 75.00 kWh;');
  });
});
