/**
 * The must-holds on the public instances (../shared/bench-data/routing), every answer checked by the
 * independent checker. Budgets are wall-clock: on a loaded machine the optimizer gets fewer iterations, not more
 * time. The parameters are the same for every instance (nothing here is per instance).
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { loadInstances, type BenchmarkInstance } from '../../../bench/routing/benchmark-instances.ts';
import type { RoutingSolution } from '../../../engine/optimization/routing-problem.ts';
import { solveRoutes } from '../../../engine/optimization/solve-routes.ts';
import { findViolations } from './routing-feasibility.ts';

const gapOf = (cost: number, bestKnown: number) => (cost - bestKnown) / bestKnown;

function solveTimed(instance: BenchmarkInstance, budgetMs: number): { solution: RoutingSolution; wallMs: number } {
  const started = performance.now();
  const solution = solveRoutes(instance.problem, { timeBudgetMs: budgetMs, seed: 1 });
  return { solution, wallMs: performance.now() - started };
}

describe('TSPLIB: within 1% of the optimum in 1 s', () => {
  it.each(loadInstances('tsplib').map((instance) => [instance.name, instance] as const))('%s', (_, instance) => {
    const { solution, wallMs } = solveTimed(instance, 1_000);
    expect(findViolations(instance.problem, solution)).toEqual([]);
    expect(solution.unassigned).toEqual([]);
    expect(gapOf(solution.cost, instance.bestKnown.cost)).toBeLessThanOrEqual(0.01);
    expect(wallMs).toBeLessThanOrEqual(1_100);
  });
});

describe('Solomon VRPTW: feasible, average distance gap ≤ 5% in 5 s each', () => {
  const gaps: number[] = [];
  it.each(loadInstances('solomon', 'distance').map((instance) => [instance.name, instance] as const))(
    '%s',
    (_, instance) => {
      const { solution, wallMs } = solveTimed(instance, 5_000);
      expect(findViolations(instance.problem, solution)).toEqual([]);
      expect(solution.unassigned).toEqual([]);
      expect(solution.vehiclesUsed).toBeGreaterThan(0);
      expect(wallMs).toBeLessThanOrEqual(5_500);
      gaps.push(gapOf(solution.distance, instance.bestKnownDistance.cost));
    },
    15_000,
  );

  it('averages a distance gap of at most 5% over the six instances', () => {
    expect(gaps).toHaveLength(6);
    expect(gaps.reduce((a, b) => a + b, 0) / gaps.length).toBeLessThanOrEqual(0.05);
  });
});

describe('Li & Lim PDPTW: every pickup before its dropoff on the same vehicle', () => {
  it.each(loadInstances('pdptw', 'vehicles-then-distance').map((instance) => [instance.name, instance] as const))(
    '%s',
    (_, instance) => {
      const { solution } = solveTimed(instance, 2_000);
      expect(findViolations(instance.problem, solution)).toEqual([]);
      expect(solution.unassigned).toEqual([]);
      for (const route of solution.routes) {
        const kinds = new Map(route.stops.map((stop, i) => [`${stop.jobId}:${stop.kind}`, i]));
        for (const stop of route.stops.filter((s) => s.kind === 'pickup')) {
          expect(kinds.get(`${stop.jobId}:dropoff`)).toBeGreaterThan(kinds.get(`${stop.jobId}:pickup`)!);
        }
      }
    },
    10_000,
  );
});
