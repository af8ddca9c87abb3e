/**
 * Every feature at once on small random problems (a seeded generator, so a failure replays): visits with
 * deliveries and pickups, shipments, two capacity dimensions, several windows per stop, shifts, two vehicle kinds
 * (one with an open end). Whatever the optimizer answers must pass the independent checker.
 */
import { describe, expect, it } from 'vitest';
import { euclideanMatrix } from '../../../engine/optimization/euclidean-matrix.ts';
import type { RoutingJob, RoutingObjective, RoutingProblem, RoutingStop } from '../../../engine/optimization/routing-problem.ts';
import { createSeededRandom, type SeededRandom } from '../../../engine/optimization/seeded-random.ts';
import { solveRoutes } from '../../../engine/optimization/solve-routes.ts';
import { findViolations } from './routing-feasibility.ts';

const OBJECTIVES: RoutingObjective[] = ['distance', 'duration', 'vehicles-then-distance'];

function randomProblem(random: SeededRandom, objective: RoutingObjective): RoutingProblem {
  const points = Array.from({ length: 25 }, () => ({ x: random.int(100), y: random.int(100) }));
  const amount = () => [1 + random.int(5), random.int(4)];
  const stop = (location: number): RoutingStop => {
    const windows = Array.from({ length: random.int(3) }, (_, i) => {
      const start = i * 150 + random.int(100);
      return { start, end: start + 20 + random.int(80) };
    });
    return { location, serviceSeconds: random.int(10), timeWindows: windows };
  };
  const jobs: RoutingJob[] = [];
  let location = 1;
  while (location < points.length - 1) {
    const id = `j${jobs.length}`;
    if (random.next() < 0.4) {
      jobs.push({ id, type: 'shipment', pickup: stop(location), dropoff: stop(location + 1), amount: amount() });
      location += 2;
    } else {
      jobs.push({ id, type: 'visit', stop: stop(location), delivery: amount(), ...(random.next() < 0.3 ? { pickup: amount() } : {}) });
      location += 1;
    }
  }
  return {
    matrix: euclideanMatrix(points),
    vehicles: [
      { id: 'van', count: 2, capacity: [15, 6], shift: { start: 0, end: 600 }, startLocation: 0, endLocation: 0 },
      { id: 'bike', count: 1, capacity: [6, 2], shift: { start: 50, end: 400 }, startLocation: 0 },
    ],
    jobs,
    objective,
  };
}

describe('random problems with every constraint', () => {
  it.each(Array.from({ length: 12 }, (_, i) => i + 1))('problem %i: the answer passes the independent checker', (seed) => {
    const random = createSeededRandom(seed);
    const problem = randomProblem(random, OBJECTIVES[seed % OBJECTIVES.length]!);
    const solution = solveRoutes(problem, { timeBudgetMs: 10_000, seed, iterations: 300 });
    expect(findViolations(problem, solution)).toEqual([]);
    expect(solution.routes.length + solution.unassigned.length).toBeGreaterThan(0);
    for (const route of solution.routes) expect(route.stops.length).toBeGreaterThan(0);
  });
});
