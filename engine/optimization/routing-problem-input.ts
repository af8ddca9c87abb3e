import { DomainError } from '../domain-error.ts';
import type { RoutingOptions, RoutingProblem, RoutingStop } from './routing-problem.ts';

const OBJECTIVES = new Set(['distance', 'duration', 'vehicles-then-distance']);

/**
 * Rejects a problem the optimizer cannot read, naming the field (callers turn user input into a problem, so a
 * failure here is a 400 for them to pass on).
 * @throws DomainError 400 INVALID_ROUTING_PROBLEM
 */
export function assertRoutingProblem(problem: RoutingProblem): void {
  const size = problem.matrix.distances_meters.length;
  assertMatrix(problem.matrix.distances_meters, size, 'matrix.distances_meters');
  assertMatrix(problem.matrix.durations_seconds, size, 'matrix.durations_seconds');
  if (!OBJECTIVES.has(problem.objective)) fail('objective', `objective must be one of ${[...OBJECTIVES].join(', ')}`);
  if (problem.vehicles.length === 0) fail('vehicles', 'at least one vehicle is needed');
  const ids = new Set<string>();
  problem.jobs.forEach((job, j) => {
    const field = `jobs[${j}]`;
    if (ids.has(job.id)) fail(`${field}.id`, `job id ${job.id} is used twice`);
    ids.add(job.id);
    if (job.type === 'visit') {
      assertStop(job.stop, size, `${field}.stop`);
      assertAmounts(job.delivery, `${field}.delivery`);
      assertAmounts(job.pickup, `${field}.pickup`);
    } else if (job.type === 'shipment') {
      assertStop(job.pickup, size, `${field}.pickup`);
      assertStop(job.dropoff, size, `${field}.dropoff`);
      assertAmounts(job.amount, `${field}.amount`);
    } else fail(`${field}.type`, 'job type must be visit or shipment');
  });
  problem.vehicles.forEach((vehicle, v) => {
    const field = `vehicles[${v}]`;
    const count = vehicle.count ?? 1;
    if (!Number.isInteger(count) || count < 0) fail(`${field}.count`, 'count must be a whole number ≥ 0');
    assertAmounts(vehicle.capacity, `${field}.capacity`);
    if (vehicle.shift && !(vehicle.shift.start <= vehicle.shift.end)) fail(`${field}.shift`, 'shift must end after it starts');
    for (const key of ['startLocation', 'endLocation'] as const) {
      const location = vehicle[key];
      if (location !== undefined) assertLocation(location, size, `${field}.${key}`);
    }
  });
}

/** @throws DomainError 400 INVALID_ROUTING_OPTIONS */
export function assertRoutingOptions(options: RoutingOptions): void {
  if (!(Number.isFinite(options.timeBudgetMs) && options.timeBudgetMs > 0)) {
    throw DomainError.invalid('INVALID_ROUTING_OPTIONS', 'timeBudgetMs must be a positive number', 'timeBudgetMs');
  }
  if (options.seed !== undefined && !Number.isInteger(options.seed)) {
    throw DomainError.invalid('INVALID_ROUTING_OPTIONS', 'seed must be an integer', 'seed');
  }
  if (options.iterations !== undefined && !(Number.isInteger(options.iterations) && options.iterations >= 0)) {
    throw DomainError.invalid('INVALID_ROUTING_OPTIONS', 'iterations must be a whole number ≥ 0', 'iterations');
  }
}

function assertMatrix(rows: number[][], size: number, field: string): void {
  if (rows.length !== size) fail(field, `${field} must have ${size} rows`);
  rows.forEach((row, i) => {
    if (row.length !== size) fail(`${field}[${i}]`, `row ${i} must have ${size} values`);
    if (!row.every((value) => Number.isFinite(value) && value >= 0)) fail(`${field}[${i}]`, 'travel values must be finite and ≥ 0');
  });
}

function assertStop(stop: RoutingStop, size: number, field: string): void {
  assertLocation(stop.location, size, `${field}.location`);
  const service = stop.serviceSeconds ?? 0;
  if (!(Number.isFinite(service) && service >= 0)) fail(`${field}.serviceSeconds`, 'service time must be ≥ 0');
  stop.timeWindows?.forEach((w, i) => {
    if (!(Number.isFinite(w.start) || w.start === -Infinity) || !(w.start <= w.end)) {
      fail(`${field}.timeWindows[${i}]`, 'a time window must end after it starts');
    }
  });
}

function assertLocation(location: number, size: number, field: string): void {
  if (!(Number.isInteger(location) && location >= 0 && location < size)) fail(field, `location must be a matrix index below ${size}`);
}

function assertAmounts(amounts: number[] | undefined, field: string): void {
  if (amounts && !amounts.every((a) => Number.isFinite(a) && a >= 0)) fail(field, 'amounts must be finite and ≥ 0');
}

function fail(field: string, message: string): never {
  throw DomainError.invalid('INVALID_ROUTING_PROBLEM', message, field);
}
