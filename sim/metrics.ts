import { homeTrip, lateness } from './lateness.ts';
import type { RunContext } from './run-context.ts';
import type { Assignment, DriverState, JobState } from './world.ts';

/** The comparison's figures for one strategy; every value is derived from virtual time, never the wall clock. */
export type StrategySummary = {
  jobs: number;
  completed: number;
  impossible: number;
  not_completed: number;
  /** Completed jobs whose pickup and drop-off each started by its due time, as a share of the completed jobs. */
  on_time_rate: number;
  /** Stops whose service started after their due time (a Li & Lim window's end, or the scenario's window). */
  late_pickups: number;
  late_deliveries: number;
  /** Drivers back at the depot after their shift (a Li & Lim depot's due time); 0 when the fleet does not return. */
  late_depot_returns: number;
  pickup_wait_p50_s: number;
  pickup_wait_p95_s: number;
  utilisation: number;
  distance_km: number;
  jobs_per_driver_hour: number;
  earnings_min_cents: number;
  earnings_max_cents: number;
  /** Gini coefficient of earnings over drivers (0 = everyone earned the same). */
  earnings_gini: number;
  declines: number;
  /** Drivers who did at least one job. */
  vehicles_used: number;
};

export type StrategyResult = {
  summary: StrategySummary;
  /** Jobs no driver of the fleet can do (known before the run) and what happened to them. */
  impossible_jobs: { job: string; reason: string; outcome: string }[];
  /** Reachable jobs that were not completed, with why: should be empty. */
  not_completed_jobs: { job: string; status: string; reason: string }[];
  assignments: Assignment[];
  /** Histogram of pickup waits: counts per 5-minute bucket (the last bucket holds everything longer). */
  wait_histogram: { bucket_s: number; counts: number[] };
  /** Share of online driver time that was busy, per slice of the day. */
  utilisation_over_day: { slice_s: number; values: number[] };
  drivers: { driver: string; jobs: number; km: number; earnings_cents: number; busy_h: number; online_h: number }[];
  traces: { driver: string; points: [number, number, number][] }[];
  api_calls: Record<string, number>;
};

const round = (value: number, digits: number): number => Math.round(value * 10 ** digits) / 10 ** digits;

export function summarize(run: RunContext): StrategyResult {
  const reachable = run.jobs.filter((j) => !j.plan.impossible);
  const done = run.jobs.filter((j) => j.status === 'done');
  const waits = done.map((j) => (j.pickupArrivedAt ?? 0) - j.plan.createdAt).sort((a, b) => a - b);
  const late = lateness(run);
  const busyS = sum(run.drivers.map((d) => sum(d.busyIntervals.map(([a, b]) => b - a))));
  const onlineS = sum(run.drivers.map((d) => sum(d.onlineIntervals.map(([a, b]) => b - a))));
  const earnings = run.drivers.map((d) => d.earningsCents);
  // The way back to the depot counts in the total and in each driver's own km, so the two add up.
  const drivenM = (d: DriverState) => d.meters + (homeTrip(run, d)?.meters ?? 0);
  const notCompleted = reachable.filter((j) => j.status !== 'done');
  return {
    summary: {
      jobs: run.jobs.length,
      completed: done.length,
      impossible: run.jobs.length - reachable.length,
      not_completed: notCompleted.length,
      on_time_rate: done.length === 0 ? 0 : round(late.onTime / done.length, 4),
      late_pickups: late.latePickups,
      late_deliveries: late.lateDeliveries,
      late_depot_returns: late.lateDepotReturns,
      pickup_wait_p50_s: percentile(waits, 0.5),
      pickup_wait_p95_s: percentile(waits, 0.95),
      utilisation: onlineS === 0 ? 0 : round(busyS / onlineS, 4),
      distance_km: round(sum(run.drivers.map(drivenM)) / 1000, 2),
      jobs_per_driver_hour: onlineS === 0 ? 0 : round(done.length / (onlineS / 3600), 3),
      earnings_min_cents: Math.min(...earnings),
      earnings_max_cents: Math.max(...earnings),
      earnings_gini: round(gini(earnings), 4),
      declines: sum(run.jobs.map((j) => j.declines)),
      vehicles_used: run.drivers.filter((d) => d.jobsDone > 0).length,
    },
    impossible_jobs: run.jobs.filter((j) => j.plan.impossible).map((j) => ({ job: j.plan.name, reason: j.plan.impossible!, outcome: outcomeOf(j) })),
    not_completed_jobs: notCompleted.map((j) => ({ job: j.plan.name, status: j.status, reason: outcomeOf(j) })),
    assignments: run.assignments,
    wait_histogram: histogram(waits, waitBucketS(run.plan.scenario.demand.pickup_window_s), 12),
    utilisation_over_day: utilisationOverDay(run.drivers, run.plan.scenario.day.duration_s),
    drivers: run.drivers.map((d) => ({
      driver: d.plan.name,
      jobs: d.jobsDone,
      km: round(drivenM(d) / 1000, 2),
      earnings_cents: d.earningsCents,
      busy_h: round(sum(d.busyIntervals.map(([a, b]) => b - a)) / 3600, 3),
      online_h: round(sum(d.onlineIntervals.map(([a, b]) => b - a)) / 3600, 3),
    })),
    traces: run.drivers.map((d) => ({ driver: d.plan.name, points: d.trace })),
    api_calls: Object.fromEntries([...run.api.calls].sort(([a], [b]) => (a < b ? -1 : 1))),
  };
}

function outcomeOf(job: JobState): string {
  if (job.status === 'done') return 'completed';
  if (job.status === 'abandoned') return job.abandonReason ?? 'abandoned';
  if (job.status === 'pooled') return 'never claimed from the pool';
  if (job.status === 'offered') return 'offer still unanswered when the run ended';
  if (job.status === 'assigned') return 'still in progress when the run ended';
  return `still ${job.status} when the run ended (${job.attempts} dispatch attempts, ${job.declines} returns)`;
}

const sum = (values: number[]): number => values.reduce((total, v) => total + v, 0);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

function gini(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const total = sum(sorted);
  if (total === 0) return 0;
  const weighted = sum(sorted.map((v, i) => (2 * (i + 1) - sorted.length - 1) * v));
  return weighted / (sorted.length * total);
}

/**
 * The wait chart's bucket: a twelfth of the scenario's pickup window in whole minutes (at least one), so that the
 * chart spans the window whatever its length (5-minute buckets cut a parcel day's 4-hour waits at the first hour).
 */
export function waitBucketS(pickupWindowS: number): number {
  return Math.max(60, Math.ceil(pickupWindowS / 12 / 60) * 60);
}

function histogram(values: number[], bucketS: number, buckets: number): { bucket_s: number; counts: number[] } {
  const counts = Array.from({ length: buckets }, () => 0);
  for (const value of values) counts[Math.min(buckets - 1, Math.floor(value / bucketS))]! += 1;
  return { bucket_s: bucketS, counts };
}

/** Busy ÷ online time per slice: the overlap of each driver's intervals with the slice. */
function utilisationOverDay(drivers: DriverState[], durationS: number): { slice_s: number; values: number[] } {
  const slices = 48;
  const sliceS = Math.ceil(durationS / slices);
  const busy = Array.from({ length: slices }, () => 0);
  const online = Array.from({ length: slices }, () => 0);
  const add = (target: number[], [a, b]: [number, number]) => {
    for (let i = Math.max(0, Math.floor(a / sliceS)); i < slices && i * sliceS < b; i += 1) {
      target[i]! += Math.max(0, Math.min(b, (i + 1) * sliceS) - Math.max(a, i * sliceS));
    }
  };
  for (const driver of drivers) {
    driver.busyIntervals.forEach((interval) => add(busy, interval));
    driver.onlineIntervals.forEach((interval) => add(online, interval));
  }
  return { slice_s: sliceS, values: busy.map((b, i) => {
    const total = online[i] ?? 0;
    return total === 0 ? 0 : round(Math.min(1, b / total), 4);
  }) };
}
