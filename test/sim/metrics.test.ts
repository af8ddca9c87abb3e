import { describe, expect, it } from 'vitest';
import { buildComparison, comparisonTable } from '../../sim/comparison.ts';
import { offset } from '../../sim/geo.ts';
import { loadLiLim } from '../../sim/li-lim.ts';
import { summarize } from '../../sim/metrics.ts';
import type { Plan } from '../../sim/plan.ts';
import { createRunContext, type RunContext } from '../../sim/run-context.ts';
import type { SiteFleet } from '../../sim/setup-fleet.ts';
import type { SiteApi } from '../../sim/site-api.ts';
import { strategyAdapter } from '../../sim/strategies.ts';
import { newDriverState, newJobState } from '../../sim/world.ts';

/**
 * The summary of a finished run, from the simulator's state at the end: no engine, the figures only. Each test
 * sets the drivers and jobs as a run would have left them.
 */
function finishedRun(plan: Plan): RunContext {
  const fleet = { members: plan.drivers.map((d) => ({ name: d.name, userId: d.name })) } as unknown as SiteFleet;
  const drivers = plan.drivers.map((d, i) => newDriverState(d, fleet.members[i]!));
  const api = { calls: new Map<string, number>() } as unknown as SiteApi;
  return createRunContext({ plan, api, fleet, strategy: strategyAdapter('team-eta'), timeline: null as never, recorder: null, createdAfter: null, drivers, jobs: plan.jobs.map(newJobState) });
}

describe('the summary of a run', () => {
  it("a Li & Lim driver's km include the way back to the depot, so the drivers' km add up to the distance driven", () => {
    const run = finishedRun(loadLiLim('lc101'));
    const [first, second] = run.drivers;
    first!.jobsDone = 2;
    first!.meters = 30_000;
    first!.position = offset(first!.plan.start, 12_000, 1);
    second!.jobsDone = 1;
    second!.meters = 8_000;
    second!.position = offset(second!.plan.start, 4_000, 2);
    const { summary, drivers } = summarize(run);
    const driversKm = drivers.reduce((total, d) => total + d.km, 0);
    expect(summary.distance_km).toBeGreaterThan(38 + 15);
    expect(driversKm).toBeCloseTo(summary.distance_km, 1);
  });
});

/** A table line's cells: columns are set apart by at least two spaces. */
const cells = (line: string | undefined): string[] => line!.trim().split(/ {2,}/);

describe('the comparison table', () => {
  it("names each strategy's vehicles beside its distance, and its lateness beside the ratio to a best-known plan", () => {
    const run = finishedRun(loadLiLim('lc101'));
    for (const [i, driver] of run.drivers.slice(0, 3).entries()) {
      driver.jobsDone = 1;
      driver.meters = 10_000 * (i + 1);
    }
    run.jobs[0]!.pickupStartedAt = run.jobs[0]!.plan.pickupDue + 60;
    const table = comparisonTable(buildComparison(run.plan, [['team-eta', summarize(run)]]));
    const [header, , row] = table.split('\n').slice(2);
    const byColumn = Object.fromEntries(cells(header).map((name, i) => [name, cells(row)[i]]));
    expect(byColumn).toMatchObject({ strategy: 'team-eta', km: '60.0', vehicles: '3', 'late pu/do/depot': '1/0/0', 'km ÷ best': '0.072×' });
  });
});
