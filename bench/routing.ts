/**
 * Routing benchmark (issue 10): our optimizer on the public instances in ../shared/bench-data/routing.
 *
 * Runs, each with seed 1 and a wall-clock budget:
 * - TSPLIB (berlin52, eil51, st70, kroA100), 1 s each, against the proven optimum;
 * - Solomon VRPTW, 5 s each, twice: objective `distance` against the best-known distance (the `_distance` keys),
 *   and `vehicles-then-distance` against the best-known (fewest vehicles, then distance), as the literature ranks;
 * - Li & Lim PDPTW, 5 s each, `vehicles-then-distance` against the best-known.
 * Every answer is checked for feasibility by the tests' independent checker; a row is marked if it fails.
 * A negative gap under `vehicles-then-distance` means more vehicles than the best-known and a shorter distance:
 * read the vehicle columns first.
 *
 * Run: `npm run bench:routing` (about 90 s; ROUTING_BUDGET_SCALE=0.2 for a quick look). Progress on stderr, the
 * table on stdout, JSON in bench/results/routing.json.
 */
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { RoutingObjective } from '../engine/optimization/routing-problem.ts';
import { solveRoutes } from '../engine/optimization/solve-routes.ts';
import { findViolations } from '../test/engine/optimization/routing-feasibility.ts';
import { machineLine } from './support/environment.ts';
import { writeResults } from './support/report.ts';
import { loadInstances, type InstanceClass } from './routing/benchmark-instances.ts';
import { averages, formatRoutingTable, type RoutingRow } from './routing/routing-report.ts';

const RESULTS_FILE = fileURLToPath(new URL('./results/routing.json', import.meta.url));
const SCALE = Number(process.env.ROUTING_BUDGET_SCALE ?? 1);
const PLAN: { instanceClass: InstanceClass; objective: RoutingObjective; budgetMs: number }[] = [
  { instanceClass: 'tsplib', objective: 'distance', budgetMs: 1_000 },
  { instanceClass: 'solomon', objective: 'distance', budgetMs: 5_000 },
  { instanceClass: 'solomon', objective: 'vehicles-then-distance', budgetMs: 5_000 },
  { instanceClass: 'pdptw', objective: 'vehicles-then-distance', budgetMs: 5_000 },
];

const progress = (line: string) => process.stderr.write(`[bench:routing] ${line}\n`);

function main(): void {
  const loadBefore = os.loadavg()[0]!;
  const rows: RoutingRow[] = [];
  for (const { instanceClass, objective, budgetMs } of PLAN) {
    for (const instance of loadInstances(instanceClass, objective)) {
      const budget = budgetMs * SCALE;
      progress(`${instanceClass} ${instance.name} (${objective}, ${budget} ms)…`);
      const solution = solveRoutes(instance.problem, { timeBudgetMs: budget, seed: 1 });
      const known = objective === 'distance' ? instance.bestKnownDistance : instance.bestKnown;
      const violations = findViolations(instance.problem, solution);
      const row: RoutingRow = {
        instanceClass,
        instance: instance.name,
        objective,
        vehicles: solution.vehiclesUsed,
        bestKnownVehicles: known.vehicles,
        cost: solution.distance,
        bestKnown: known.cost,
        gap: (solution.distance - known.cost) / known.cost,
        seconds: solution.elapsedMs / 1000,
        unassigned: solution.unassigned.length,
        feasible: violations.length === 0,
      };
      rows.push(row);
      progress(`  ${row.vehicles} vehicles, cost ${row.cost.toFixed(2)} vs ${row.bestKnown} → gap ${(row.gap * 100).toFixed(2)}%, ` +
        `${row.seconds.toFixed(2)} s, ${solution.iterations} iterations${row.feasible ? '' : `, INFEASIBLE: ${violations[0]}`}`);
    }
  }
  const machine = machineLine(loadBefore);
  process.stdout.write(`\nRouting benchmark (seed 1; ${machine})\n\n${formatRoutingTable(rows)}\n`);
  const infeasible = rows.filter((row) => !row.feasible || row.unassigned > 0);
  if (infeasible.length > 0) process.stdout.write(`\nNOT feasible or incomplete: ${infeasible.map((r) => r.instance).join(', ')}\n`);
  writeResults(RESULTS_FILE, { machine, budgetScale: SCALE, rows, averages: averages(rows) });
}

main();
