import type { Comparison } from './comparison.ts';
import { comparisonTable } from './comparison.ts';

/**
 * A self-contained HTML page (inline CSS and SVG, no script, no network): per-strategy bars, pickup-wait
 * distributions, utilisation over the day and a map of the drivers' routes. Opens offline in any browser.
 */
export function renderReport(comparison: Comparison): string {
  const names = Object.keys(comparison.strategies);
  // Against a best-known plan (Li & Lim), the distance ratio and how late the run was belong side by side.
  const metrics = comparison.best_known === undefined ? BAR_METRICS : [...BAR_METRICS, ...BEST_KNOWN_BAR_METRICS];
  const bars = metrics.map(([label, pick, format]) => barChart(label, names.map((n, i) => ({ name: n, value: pick(comparison.strategies[n]!), color: color(i) })), format)).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Dispatch simulation · ${escape(comparison.scenario)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2733;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.grid{display:flex;flex-wrap:wrap;gap:16px}.card{border:1px solid #d8dee6;border-radius:6px;padding:8px}
pre{background:#f5f7fa;padding:12px;overflow:auto;font-size:12px}.legend span{margin-right:14px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #e4e8ee;text-align:left;font-size:12px}
</style></head><body>
<h1>Dispatch strategies on ${escape(comparison.scenario)}</h1>
<p>${escape(comparison.description)}<br>seed ${comparison.seed} · ${comparison.drivers} drivers · ${comparison.jobs} jobs</p>
<p class="legend">${names.map((n, i) => `<span><i style="background:${color(i)}"></i>${escape(n)}</span>`).join('')}</p>
<pre>${escape(comparisonTable(comparison))}</pre>
<h2>Strategies side by side</h2><div class="grid">${bars}</div>
<h2>Pickup wait distribution</h2><div class="grid">${waitChart(comparison, names)}</div>
<h2>Utilisation over the day</h2><div class="grid">${utilisationChart(comparison, names)}</div>
<h2>Routes driven</h2><div class="grid">${names.map((n) => routeMap(n, comparison.strategies[n]!.traces)).join('')}</div>
<h2>Impossible jobs (beyond this fleet's reach)</h2>${impossibleTable(comparison, names)}
</body></html>
`;
}

type Result = Comparison['strategies'][string];

const PALETTE = ['#2f6fde', '#e4572e', '#17a398', '#f3a712', '#8e44ad', '#5d6d7e', '#c0392b', '#27ae60'];
const color = (i: number): string => PALETTE[i % PALETTE.length]!;

const BAR_METRICS: [string, (r: Result) => number, (v: number) => string][] = [
  ['jobs completed', (r) => r.summary.completed, (v) => String(v)],
  ['on-time rate', (r) => r.summary.on_time_rate * 100, (v) => `${v.toFixed(1)}%`],
  ['pickup wait p50 (min)', (r) => r.summary.pickup_wait_p50_s / 60, (v) => v.toFixed(1)],
  ['pickup wait p95 (min)', (r) => r.summary.pickup_wait_p95_s / 60, (v) => v.toFixed(1)],
  ['driver utilisation', (r) => r.summary.utilisation * 100, (v) => `${v.toFixed(1)}%`],
  ['distance driven (km)', (r) => r.summary.distance_km, (v) => v.toFixed(0)],
  ['jobs per driver-hour', (r) => r.summary.jobs_per_driver_hour, (v) => v.toFixed(2)],
  ['earnings Gini', (r) => r.summary.earnings_gini, (v) => v.toFixed(3)],
];

const BEST_KNOWN_BAR_METRICS: typeof BAR_METRICS = [
  ['distance ÷ best known', (r) => r.distance_ratio_to_best_known ?? 0, (v) => `${v.toFixed(2)}×`],
  ['late pickups', (r) => r.summary.late_pickups, (v) => String(v)],
  ['late deliveries', (r) => r.summary.late_deliveries, (v) => String(v)],
  ['late depot returns', (r) => r.summary.late_depot_returns, (v) => String(v)],
];

function barChart(title: string, items: { name: string; value: number; color: string }[], format: (v: number) => string): string {
  const width = 300;
  const rowH = 22;
  const height = 24 + items.length * rowH;
  const max = Math.max(1e-9, ...items.map((i) => i.value));
  const rows = items
    .map((item, i) => {
      const y = 20 + i * rowH;
      const w = Math.max(1, (item.value / max) * 140);
      return `<text x="0" y="${y + 13}" font-size="11">${escape(item.name)}</text><rect x="95" y="${y + 2}" width="${w.toFixed(1)}" height="14" fill="${item.color}"/><text x="${(99 + w).toFixed(1)}" y="${y + 13}" font-size="11">${escape(format(item.value))}</text>`;
    })
    .join('');
  return `<div class="card"><svg width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escape(title)}"><text x="0" y="12" font-size="12" font-weight="600">${escape(title)}</text>${rows}</svg></div>`;
}

function lineChart(title: string, series: { color: string; values: number[] }[], xLabel: (i: number) => string, yMax: number, yFormat: (v: number) => string): string {
  const [w, h, left, bottom] = [560, 220, 44, 24];
  const n = Math.max(1, ...series.map((s) => s.values.length));
  const x = (i: number) => left + (i / Math.max(1, n - 1)) * (w - left - 10);
  const y = (v: number) => h - bottom - (v / Math.max(1e-9, yMax)) * (h - bottom - 20);
  const paths = series.map((s) => `<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}"/>`).join('');
  const ticks = [0, 0.5, 1].map((f) => `<text x="2" y="${(y(f * yMax) + 4).toFixed(1)}" font-size="10">${escape(yFormat(f * yMax))}</text><line x1="${left}" x2="${w - 10}" y1="${y(f * yMax).toFixed(1)}" y2="${y(f * yMax).toFixed(1)}" stroke="#e4e8ee"/>`).join('');
  const xTicks = [0, Math.floor((n - 1) / 2), n - 1].map((i) => `<text x="${x(i).toFixed(1)}" y="${h - 6}" font-size="10" text-anchor="middle">${escape(xLabel(i))}</text>`).join('');
  return `<div class="card"><svg width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img" aria-label="${escape(title)}"><text x="${left}" y="12" font-size="12" font-weight="600">${escape(title)}</text>${ticks}${paths}${xTicks}</svg></div>`;
}

function waitChart(comparison: Comparison, names: string[]): string {
  const series = names.map((n, i) => {
    const { counts } = comparison.strategies[n]!.wait_histogram;
    const total = counts.reduce((a, b) => a + b, 0) || 1;
    return { color: color(i), values: counts.map((c) => c / total) };
  });
  const bucket = comparison.strategies[names[0]!]?.wait_histogram.bucket_s ?? 300;
  const yMax = Math.max(0.01, ...series.flatMap((s) => s.values));
  return lineChart('share of jobs by pickup wait (minutes; last bucket: longer)', series, (i) => `${(i * bucket) / 60}`, yMax, (v) => `${Math.round(v * 100)}%`);
}

function utilisationChart(comparison: Comparison, names: string[]): string {
  const series = names.map((n, i) => ({ color: color(i), values: comparison.strategies[n]!.utilisation_over_day.values }));
  const slice = comparison.strategies[names[0]!]?.utilisation_over_day.slice_s ?? 900;
  return lineChart('busy share of online driver time', series, (i) => `${((i * slice) / 3600).toFixed(1)} h`, 1, (v) => `${Math.round(v * 100)}%`);
}

function routeMap(name: string, traces: Result['traces']): string {
  const points = traces.flatMap((t) => t.points);
  if (points.length === 0) return `<div class="card">${escape(name)}: no routes</div>`;
  const lats = points.map((p) => p[1]);
  const lngs = points.map((p) => p[2]);
  const [minLat, maxLat, minLng, maxLng] = [Math.min(...lats), Math.max(...lats), Math.min(...lngs), Math.max(...lngs)];
  const size = 320;
  // Degrees of longitude shrink with latitude: scale them so the map is not stretched.
  const lngFactor = Math.cos((((minLat + maxLat) / 2) * Math.PI) / 180);
  const spanX = Math.max(1e-9, (maxLng - minLng) * lngFactor);
  const spanY = Math.max(1e-9, maxLat - minLat);
  const scale = (size - 10) / Math.max(spanX, spanY);
  const offsetX = (size - spanX * scale) / 2;
  const offsetY = (size - spanY * scale) / 2;
  const px = (lng: number) => (offsetX + (lng - minLng) * lngFactor * scale).toFixed(1);
  const py = (lat: number) => (size - offsetY - (lat - minLat) * scale).toFixed(1);
  const lines = traces
    .filter((t) => t.points.length > 1)
    .map((t, i) => `<polyline fill="none" stroke="hsl(${(i * 47) % 360} 65% 45%)" stroke-opacity="0.55" stroke-width="1" points="${t.points.map((p) => `${px(p[2])},${py(p[1])}`).join(' ')}"/>`)
    .join('');
  return `<div class="card"><svg width="${size}" height="${size + 16}" viewBox="0 0 ${size} ${size + 16}" role="img" aria-label="routes of ${escape(name)}"><rect width="${size}" height="${size}" fill="#f7f9fb"/>${lines}<text x="4" y="${size + 13}" font-size="12">${escape(name)}</text></svg></div>`;
}

function impossibleTable(comparison: Comparison, names: string[]): string {
  const rows = names.flatMap((n) => comparison.strategies[n]!.impossible_jobs.map((j) => `<tr><td>${escape(n)}</td><td>${escape(j.job)}</td><td>${escape(j.reason)}</td><td>${escape(j.outcome)}</td></tr>`));
  if (rows.length === 0) return '<p>None: every job was within the fleet\'s reach.</p>';
  return `<table><tr><th>strategy</th><th>job</th><th>why impossible</th><th>what happened</th></tr>${rows.join('')}</table>`;
}

function escape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}
