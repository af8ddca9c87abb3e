import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { loadInstances } from '../../../bench/routing/benchmark-instances.ts';
import { DomainError } from '../../../engine/domain-error.ts';
import { euclideanMatrix } from '../../../engine/optimization/euclidean-matrix.ts';
import type { RoutingProblem } from '../../../engine/optimization/routing-problem.ts';
import { createSeededRandom } from '../../../engine/optimization/seeded-random.ts';
import { solveRoutes } from '../../../engine/optimization/solve-routes.ts';
import { findViolations } from './routing-feasibility.ts';

const r101 = () => loadInstances('solomon', 'distance').find((instance) => instance.name === 'R101')!.problem;
const lr101 = () => loadInstances('pdptw', 'vehicles-then-distance').find((instance) => instance.name === 'lr101')!.problem;

/** Points on a line at 0, 10, 20, ...: travel = distance. */
function lineProblem(jobs: RoutingProblem['jobs'], vehicles: RoutingProblem['vehicles'], points = 6): RoutingProblem {
  const matrix = euclideanMatrix(Array.from({ length: points }, (_, i) => ({ x: i * 10, y: 0 })));
  return { matrix, vehicles, jobs, objective: 'distance' };
}

describe('the same seed gives the same answer', () => {
  it('replaying a timed run with its seed and iteration count gives identical routes', () => {
    const first = solveRoutes(r101(), { timeBudgetMs: 700, seed: 7 });
    const replay = solveRoutes(r101(), { timeBudgetMs: 60_000, seed: 7, iterations: first.iterations });
    expect(replay.iterations).toBe(first.iterations);
    expect(replay.routes).toEqual(first.routes);
    expect(replay.distance).toBe(first.distance);
  });

  it('two runs with the same seed and iterations agree, and another seed searches differently', () => {
    const runs = [7, 7, 8].map((seed) => solveRoutes(lr101(), { timeBudgetMs: 60_000, seed, iterations: 300 }));
    expect(runs[1]!.routes).toEqual(runs[0]!.routes);
    expect(runs[2]!.routes).not.toEqual(runs[0]!.routes);
  });
});

describe('the time budget', () => {
  it.each([200, 1_000])('is respected within a tenth (%i ms)', (budget) => {
    const problem = lr101();
    const started = performance.now();
    const solution = solveRoutes(problem, { timeBudgetMs: budget, seed: 1 });
    const wall = performance.now() - started;
    expect(wall).toBeLessThanOrEqual(budget * 1.1);
    expect(solution.elapsedMs).toBeLessThanOrEqual(wall);
    expect(findViolations(problem, solution)).toEqual([]);
  });
});

describe('jobs that cannot be served', () => {
  it('come back unassigned with the reason, and the rest is still planned', () => {
    const problem = lineProblem(
      [
        { id: 'fits', type: 'visit', stop: { location: 1 }, delivery: [6] },
        { id: 'no-room-left', type: 'visit', stop: { location: 2 }, delivery: [6] },
        { id: 'too-big', type: 'visit', stop: { location: 3 }, delivery: [11] },
        { id: 'too-far-for-its-window', type: 'visit', stop: { location: 5, timeWindows: [{ start: 0, end: 30 }] } },
      ],
      [{ id: 'van', capacity: [10], startLocation: 0, endLocation: 0, shift: { start: 0, end: 1_000 } }],
    );
    const solution = solveRoutes(problem, { timeBudgetMs: 200 });
    expect(findViolations(problem, solution)).toEqual([]);
    expect(solution.routes).toHaveLength(1);
    const reasons = Object.fromEntries(solution.unassigned.map((u) => [u.jobId, u.reason]));
    expect(reasons).toEqual({ 'too-big': 'capacity', 'too-far-for-its-window': 'time_window', [solution.routes[0]!.stops[0]!.jobId === 'fits' ? 'no-room-left' : 'fits']: 'fleet_exhausted' });
  });

  it('several windows per stop: a stop missed in its morning window is served in its afternoon one', () => {
    const problem = lineProblem(
      [
        { id: 'a', type: 'visit', stop: { location: 5, serviceSeconds: 10, timeWindows: [{ start: 0, end: 60 }] } },
        { id: 'b', type: 'visit', stop: { location: 1, timeWindows: [{ start: 0, end: 5 }, { start: 100, end: 120 }] } },
      ],
      [{ id: 'van', startLocation: 0, endLocation: 0 }],
    );
    const solution = solveRoutes(problem, { timeBudgetMs: 200 });
    expect(findViolations(problem, solution)).toEqual([]);
    expect(solution.routes[0]!.stops.map((s) => [s.jobId, s.serviceStart])).toEqual([['a', 50], ['b', 100]]);
  });
});

describe('exactness on small problems', () => {
  it.each([
    [1, 'with time windows', true],
    [2, 'with time windows', true],
    [3, 'without windows (2-opt and Or-opt on)', false],
    [4, 'without windows (2-opt and Or-opt on)', false],
  ])('finds the optimum of an asymmetric 8-stop tour (instance %i, %s)', (seed, _label, windowed) => {
    const random = createSeededRandom(seed);
    const size = 9;
    const rows = Array.from({ length: size }, (_row, i) => Array.from({ length: size }, (_cell, j) => (i === j ? 0 : 5 + Math.round(random.next() * 50))));
    const jobs: RoutingProblem['jobs'] = Array.from({ length: size - 1 }, (_, i) => ({
      id: `s${i + 1}`,
      type: 'visit',
      stop: { location: i + 1, serviceSeconds: 3, timeWindows: windowed && i % 3 === 0 ? [{ start: 0, end: 150 + i * 20 }] : undefined },
    }));
    const problem: RoutingProblem = {
      matrix: { distances_meters: rows, durations_seconds: rows },
      vehicles: [{ id: 'van', startLocation: 0, endLocation: 0 }],
      jobs,
      objective: 'distance',
    };
    const solution = solveRoutes(problem, { timeBudgetMs: 500, seed: 1 });
    expect(findViolations(problem, solution)).toEqual([]);
    expect(solution.distance).toBe(bruteForceOptimum(problem));
  });
});

describe('input errors', () => {
  it('a location outside the matrix is a 400 naming the field', () => {
    const problem = lineProblem([{ id: 'x', type: 'visit', stop: { location: 9 } }], [{ id: 'van' }]);
    expect(() => solveRoutes(problem, { timeBudgetMs: 100 })).toThrow(expect.objectContaining({ status: 400, field: 'jobs[0].stop.location' }));
    expect(() => solveRoutes(lineProblem([], [{ id: 'van' }]), { timeBudgetMs: 0 })).toThrow(DomainError);
  });
});

describe('the independent checker', () => {
  it('catches a dropoff before its pickup, an overload and a job served twice', () => {
    const problem = lr101();
    const solution = solveRoutes(problem, { timeBudgetMs: 60_000, iterations: 50 });
    const route = solution.routes[0]!;
    const swapped = { ...solution, routes: [{ ...route, stops: route.stops.toReversed() }, ...solution.routes.slice(1)] };
    expect(findViolations(problem, swapped).join('\n')).toMatch(/dropped off before it was picked up/);
    const overloaded = { ...problem, vehicles: [{ ...problem.vehicles[0]!, capacity: [1] }] };
    expect(findViolations(overloaded, solution).join('\n')).toMatch(/over capacity/);
    const twice = { ...solution, routes: [...solution.routes, solution.routes[0]!] };
    expect(findViolations(problem, twice).join('\n')).toMatch(/used by two routes/);
  });
});

/** Tries every order of the stops; returns the shortest feasible tour's distance. */
function bruteForceOptimum(problem: RoutingProblem): number {
  const d = problem.matrix.distances_meters;
  const stops = problem.jobs.map((job) => (job.type === 'visit' ? job.stop : job.pickup));
  let best = Infinity;
  const walk = (order: number[], left: number[]) => {
    if (left.length === 0) {
      let time = 0;
      let place = 0;
      let length = 0;
      for (const s of order) {
        const stop = stops[s]!;
        time += (place === 0 ? 0 : stops[order[order.indexOf(s) - 1]!]!.serviceSeconds ?? 0) + d[place]![stop.location]!;
        length += d[place]![stop.location]!;
        const window = stop.timeWindows?.[0];
        if (window && time > window.end) return;
        place = stop.location;
      }
      best = Math.min(best, length + d[place]![0]!);
      return;
    }
    left.forEach((s, i) => walk([...order, s], [...left.slice(0, i), ...left.slice(i + 1)]));
  };
  walk([], stops.map((_, i) => i));
  return best;
}
