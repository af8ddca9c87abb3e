import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { simulateLive } from '../../sim/live.ts';
import { planFor } from '../../sim/scenario-loader.ts';
import { SimDatabases } from '../../sim/sim-database.ts';
import { simulateInProcess } from '../../sim/simulate.ts';
import type { StrategyName } from '../../sim/strategies.ts';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { ADMIN_URL, APP_ROLE } from '../support/postgres.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
let acme: SiteFixture;
const databases = new SimDatabases({ adminUrl: ADMIN_URL, appRole: APP_ROLE, template: inject('templateDatabase') });

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
});
afterAll(async () => {
  await server.close();
  await databases.close();
});

const STRATEGIES: StrategyName[] = ['team-eta', 'pool'];

describe('live replay against a running server', () => {
  it('completes the same jobs with the same assignment decisions as the in-process run', { timeout: 300_000 }, async () => {
    const plan = planFor('test-small', 42, { jobs: 16 });
    const inProcess = await simulateInProcess(plan, STRATEGIES, { databases });
    // Positions only at stops (no streaming in between), so both runs show the engine exactly the same inputs.
    const live = await simulateLive(plan, STRATEGIES, { baseUrl: `http://acme.localhost:${server.port}`, apiKey: acme.keys.admin, speed: 900, streamEveryS: 0 });
    for (const name of STRATEGIES) {
      const a = inProcess.comparison.strategies[name]!;
      const b = live.comparison.strategies[name]!;
      expect(a.not_completed_jobs, name).toEqual([]);
      expect(b.not_completed_jobs, name).toEqual([]);
      expect(b.assignments, name).toEqual(a.assignments);
      expect(b.summary.completed, name).toBe(a.summary.completed);
      expect(b.summary.distance_km, name).toBe(a.summary.distance_km);
    }
    // The live drivers really reached the server: their jobs are completed there, by them.
    const jobs = await acme.as.admin.get<{ data: { phase: string }[]; meta: { pagination: { totalItems: number } } }>('/api/job/search?page_size=100');
    const completed = jobs.body.data.filter((job) => job.phase === 'completed').length;
    expect(completed).toBe(STRATEGIES.reduce((sum, name) => sum + live.comparison.strategies[name]!.summary.completed, 0));
  });
});
