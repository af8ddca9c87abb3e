import type { StrategyResult } from './metrics.ts';
import type { Plan } from './plan.ts';

/** The machine-readable result of a comparison: a pure function of the plan and the engine (no wall-clock figure). */
export type Comparison = {
  format: 'dispatch-sim-result/1';
  scenario: string;
  description: string;
  seed: number;
  drivers: number;
  jobs: number;
  best_known?: { instance: string; distance_km: number; vehicles: number };
  strategies: Record<string, StrategyResult & { distance_ratio_to_best_known?: number }>;
};

export function buildComparison(plan: Plan, results: [string, StrategyResult][]): Comparison {
  const best = plan.bestKnown;
  return {
    format: 'dispatch-sim-result/1',
    scenario: plan.scenario.name,
    description: plan.scenario.description,
    seed: plan.seed,
    drivers: plan.drivers.length,
    jobs: plan.jobs.length,
    ...(best ? { best_known: { instance: best.instance, distance_km: best.distanceKm, vehicles: best.vehicles } } : {}),
    strategies: Object.fromEntries(
      results.map(([name, result]) => [
        name,
        best ? { ...result, distance_ratio_to_best_known: Math.round((result.summary.distance_km / best.distanceKm) * 1000) / 1000 } : result,
      ]),
    ),
  };
}

const COLUMNS: [string, (r: Comparison['strategies'][string]) => string][] = [
  ['completed', (r) => `${r.summary.completed}/${r.summary.jobs - r.summary.impossible}`],
  ['impossible', (r) => String(r.summary.impossible)],
  ['on time', (r) => `${(r.summary.on_time_rate * 100).toFixed(1)}%`],
  ['wait p50', (r) => minutes(r.summary.pickup_wait_p50_s)],
  ['wait p95', (r) => minutes(r.summary.pickup_wait_p95_s)],
  ['utilisation', (r) => `${(r.summary.utilisation * 100).toFixed(1)}%`],
  ['km', (r) => r.summary.distance_km.toFixed(1)],
  // A distance means little without the vehicles that drove it (the Li & Lim literature minimises vehicles first).
  ['vehicles', (r) => String(r.summary.vehicles_used)],
  ['jobs/drv-h', (r) => r.summary.jobs_per_driver_hour.toFixed(2)],
  ['earn gini', (r) => r.summary.earnings_gini.toFixed(3)],
  ['earn min–max', (r) => `${euros(r.summary.earnings_min_cents)}–${euros(r.summary.earnings_max_cents)}`],
];

/**
 * Against a best-known plan, the distance ratio is only comparable with how late the online run was: the late
 * pickups, deliveries and returns to the depot go beside it.
 */
const BEST_KNOWN_COLUMNS: typeof COLUMNS = [
  ['late pu/do/depot', (r) => latenessCell(r.summary)],
  ['km ÷ best', (r) => `${r.distance_ratio_to_best_known}×`],
];

/** Late pickups / late deliveries / late returns to the depot, e.g. `3/5/0`. */
export function latenessCell(summary: StrategyResult['summary']): string {
  return `${summary.late_pickups}/${summary.late_deliveries}/${summary.late_depot_returns}`;
}

/** The comparison as a text table, one row per strategy (the CLI prints it). */
export function comparisonTable(comparison: Comparison): string {
  const columns = comparison.best_known === undefined ? COLUMNS : [...COLUMNS, ...BEST_KNOWN_COLUMNS];
  const header = ['strategy', ...columns.map(([name]) => name)];
  const rows = Object.entries(comparison.strategies).map(([name, r]) => [name, ...columns.map(([, cell]) => cell(r))]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const title = `${comparison.scenario} · seed ${comparison.seed} · ${comparison.drivers} drivers · ${comparison.jobs} jobs`;
  const best = comparison.best_known ? `\nbest-known offline plan: ${comparison.best_known.distance_km} km with ${comparison.best_known.vehicles} vehicles` : '';
  return [title + best, line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const minutes = (seconds: number): string => `${(seconds / 60).toFixed(1)} min`;
const euros = (cents: number): string => (cents / 100).toFixed(0);
