import { performance } from 'node:perf_hooks';
import { buildRoutingModel } from './routing-model.ts';
import type { RoutingOptions, RoutingProblem, RoutingSolution } from './routing-problem.ts';
import { assertRoutingOptions } from './routing-problem-input.ts';
import { toRoutingSolution } from './routing-result.ts';
import { searchRoutes } from './routing-search.ts';

/** Share of the budget kept for building the answer after the last iteration (and timer slack). */
const BUDGET_SAFETY = 0.95;

/**
 * Assigns and orders jobs over the vehicles: capacity (several dimensions), shifts, time windows (several per
 * stop), pickup-before-dropoff on one vehicle; minimising the problem's objective within the time budget.
 * Synchronous and CPU-bound: callers on a server should run it off the request path or with a small budget.
 *
 * Same seed and same `iterations` → the same answer (see `searchRoutes` for how the clock is kept out of it).
 * Jobs that cannot be placed come back in `unassigned` with a reason, never dropped.
 *
 * @throws DomainError 400 INVALID_ROUTING_PROBLEM / INVALID_ROUTING_OPTIONS naming the field
 */
export function solveRoutes(problem: RoutingProblem, options: RoutingOptions): RoutingSolution {
  const started = performance.now();
  assertRoutingOptions(options);
  const model = buildRoutingModel(problem);
  const objective = problem.objective === 'duration' ? 'duration' : 'distance';
  const seed = options.seed ?? 1;
  const deadline = started + options.timeBudgetMs * BUDGET_SAFETY;
  const outcome = searchRoutes(model, objective, { seed, deadline, maxIterations: options.iterations });
  const solution = toRoutingSolution(problem, model, outcome.solution, objective);
  return { ...solution, iterations: outcome.iterations, seed, elapsedMs: performance.now() - started };
}
