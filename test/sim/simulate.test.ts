import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { CREATED_AFTER_LAST_SHIFT, markImpossible } from '../../sim/plan.ts';
import { renderReport } from '../../sim/report-html.ts';
import { planFor } from '../../sim/scenario-loader.ts';
import { SimDatabases } from '../../sim/sim-database.ts';
import { simulateInProcess } from '../../sim/simulate.ts';
import type { StrategyName } from '../../sim/strategies.ts';
import { ADMIN_URL, APP_ROLE } from '../support/postgres.ts';

const STRATEGIES: StrategyName[] = ['round-robin', 'team-eta', 'pool', 'load-balanced', 'zone-based'];
const databases = new SimDatabases({ adminUrl: ADMIN_URL, appRole: APP_ROLE, template: inject('templateDatabase') });
afterAll(() => databases.close());

/** 16 jobs (plus the scenario's 2 unreachable ones) for 6 drivers over an hour: small enough for a test. */
const simulate = (seed: number, strategies = STRATEGIES) => simulateInProcess(planFor('test-small', seed, { jobs: 16 }), strategies, { databases });

describe('in-process simulation on the real engine', () => {
  let first: Awaited<ReturnType<typeof simulate>>;

  it('every strategy completes every job its fleet can reach and names the impossible ones', { timeout: 600_000 }, async () => {
    first = await simulate(42);
    for (const name of STRATEGIES) {
      const result = first.comparison.strategies[name]!;
      expect(result.not_completed_jobs, name).toEqual([]);
      expect(result.summary.completed, name).toBe(16);
      expect(result.impossible_jobs.map((j) => j.job), name).toHaveLength(2);
      for (const job of result.impossible_jobs) expect(job.outcome, `${name} ${job.job}`).not.toBe('completed');
      expect(result.summary.distance_km, name).toBeGreaterThan(0);
    }
    // The pool is claimed, the others dispatched: the engine's own mechanisms ran.
    expect(first.comparison.strategies.pool!.assignments.every((a) => a.via === 'claim')).toBe(true);
    expect(first.comparison.strategies['team-eta']!.assignments.every((a) => a.via === 'dispatch')).toBe(true);
  });

  it('the same seed gives byte-identical JSON; another seed differs', { timeout: 600_000 }, async () => {
    const again = await simulate(42);
    expect(JSON.stringify(again.comparison)).toBe(JSON.stringify(first.comparison));
    const other = await simulate(43, ['round-robin']);
    expect(JSON.stringify(other.comparison.strategies['round-robin'])).not.toBe(JSON.stringify(first.comparison.strategies['round-robin']));
  });

  it('a job waiting for a full fleet is dispatched again only when a driver frees a slot', { timeout: 600_000 }, async () => {
    // Two drivers for 32 jobs: most jobs wait hours for a slot.
    const plan = planFor('test-small', 42, { jobs: 30, drivers: 2 });
    const sim = await simulateInProcess(plan, ['team-eta'], { databases });
    const result = sim.comparison.strategies['team-eta']!;
    expect(result.not_completed_jobs).toEqual([]);
    expect(result.summary.pickup_wait_p95_s).toBeGreaterThan(3600);
    // Each attempt has a cause: the job's creation, a finished job, a shift start (max_load slots), a return (the
    // returned job's own retry and the next waiting job for the freed slot). A retry per interval would make hundreds.
    const { jobs, completed, declines } = result.summary;
    const shiftSlots = plan.drivers.length * (plan.scenario.fleet.max_load ?? 1);
    const causes = jobs + completed + shiftSlots + 2 * declines;
    expect(result.api_calls['POST /api/dispatch/team/job']).toBeLessThanOrEqual(causes);
    // The saturated day is as deterministic as the small one: job creations overlapping later events included.
    const again = await simulateInProcess(plan, ['team-eta'], { databases });
    expect(JSON.stringify(again.comparison)).toBe(JSON.stringify(sim.comparison));
  });

  it('a job created after the last shift is reported impossible and not done, so completed never exceeds the reachable jobs', { timeout: 600_000 }, async () => {
    // One driver whose shift ends halfway through the hour, busy past it with the jobs created before.
    const base = planFor('test-small', 42, { jobs: 10, drivers: 1 });
    const drivers = [{ ...base.drivers[0]!, shiftEnd: 1800 }];
    const plan = { ...base, drivers, jobs: markImpossible(base.scenario, null, drivers, base.jobs) };
    expect(plan.jobs.filter((job) => job.impossible === CREATED_AFTER_LAST_SHIFT).length).toBeGreaterThan(2);
    const sim = await simulateInProcess(plan, ['team-eta', 'pool'], { databases });
    for (const [name, result] of Object.entries(sim.comparison.strategies)) {
      expect(result.impossible_jobs.filter((job) => job.outcome === 'completed'), name).toEqual([]);
      expect(result.summary.completed, name).toBeLessThanOrEqual(result.summary.jobs - result.summary.impossible);
      expect(result.not_completed_jobs, name).toEqual([]);
    }
  });

  it('the HTML report renders in headless Chromium without errors', { timeout: 120_000 }, () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sim-report-'));
    const html = path.join(dir, 'report.html');
    const screenshot = path.join(dir, 'report.png');
    writeFileSync(html, renderReport(first.comparison));
    // --enable-logging=stderr prints the page's console messages: a script error or a failed load shows up there.
    const run = spawnSync(
      '/usr/bin/chromium',
      ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--enable-logging=stderr', '--v=0', '--window-size=1280,2400', `--screenshot=${screenshot}`, `file://${html}`],
      { encoding: 'utf8', timeout: 90_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(statSync(screenshot).size).toBeGreaterThan(20_000);
    // Page console messages (CONSOLE lines) and load failures would be logged here.
    expect(run.stderr).not.toMatch(/CONSOLE|Uncaught|net::ERR_/);
    const text = readFileSync(html, 'utf8');
    expect(text.match(/<svg/g)!.length).toBeGreaterThanOrEqual(8 + 2 + STRATEGIES.length);
    expect(text).not.toMatch(/<script|https?:\/\//);
  });

  it('the HTML report of a run against a best-known plan charts the distance ratio beside how late the run was', () => {
    const strategies = Object.fromEntries(Object.entries(first.comparison.strategies).map(([name, r]) => [name, { ...r, distance_ratio_to_best_known: 1.5 }]));
    const html = renderReport({ ...first.comparison, best_known: { instance: 'lc101', distance_km: 828.94, vehicles: 10 }, strategies });
    for (const label of ['distance ÷ best known', 'late pickups', 'late deliveries', 'late depot returns']) expect(html).toContain(`aria-label="${label}"`);
    expect(html).toContain('1.50×');
    expect(renderReport(first.comparison)).not.toContain('distance ÷ best known');
  });
});
