import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { createDriver, createTeam, createVehicle, jobAt } from './dispatch-fixtures.ts';

type One<T> = { data: T };
type Decision = { exclusions: { driver_id: string; reason: string }[]; winner: { driver_id: string } | null };
type TeamOutcome = { selected_driver_id: string; dispatch: { decision: Decision } };

const PARIS = { lat: 48.8566, lng: 2.3522 };
const near = (km: number) => ({ lat: PARIS.lat + km / 111, lng: PARIS.lng });

let server: TestServer;
let acme: SiteFixture;
let globex: SiteFixture;
let vehicle: string;

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_POINTS: '100000' });
  acme = await createSiteFixture(server, 'acme');
  globex = await createSiteFixture(server, 'globex');
  vehicle = await createVehicle(acme);
}, 60_000);
afterAll(() => server.close());

const fleetVersion = (siteId: string) =>
  inTenantScope(server.services.db.orm, { siteId }, async (em) => {
    const [row] = await em.execute<{ version: string }[]>('select version from dispatch_fleet_version where site_id = ?', [siteId]);
    return Number(row?.version ?? 0);
  });

describe('dispatch driver index (cached driver facts)', () => {
  it('a fleet write bumps only its own site version, and the next decision sees it; availability is always read fresh', async () => {
    const team = await createTeam(acme, 'Index team');
    const far = await createDriver(server, acme, { name: 'Far Fio', at: near(6), vehicleId: vehicle, teamIds: [team] });
    const nearest = await createDriver(server, acme, { name: 'Near Nia', at: near(0.5), vehicleId: vehicle, teamIds: [team] });
    const teamJob = async () => acme.as.dispatcher.post<One<TeamOutcome>>('/api/dispatch/team/job', { job_id: (await jobAt(acme.as.dispatcher, PARIS)).id, team_id: team });

    const first = await teamJob();
    expect(first.status).toBe(200);
    expect(first.body.data.selected_driver_id).toBe(nearest.id);

    // The worker is suspended: the index was loaded before, the version trigger makes the next decision reload it.
    const [acmeBefore, globexBefore] = [await fleetVersion(acme.site.id), await fleetVersion(globex.site.id)];
    expect((await acme.as.dispatcher.put('/api/worker', { id: nearest.id, operational_status: 'suspended' })).status).toBe(200);
    expect(await fleetVersion(acme.site.id)).toBeGreaterThan(acmeBefore);
    expect(await fleetVersion(globex.site.id)).toBe(globexBefore);
    const second = await teamJob();
    expect(second.body.data.selected_driver_id).toBe(far.id);
    expect(second.body.data.dispatch.decision.exclusions).toContainEqual(expect.objectContaining({ driver_id: nearest.id, reason: 'inactive' }));

    // Back to active, while the far driver goes on a break: no fleet write, the actor state is read per decision.
    expect((await acme.as.dispatcher.put('/api/worker', { id: nearest.id, operational_status: 'active' })).status).toBe(200);
    expect((await far.client.put('/api/driver/status', { availability: 'on_break' })).status).toBe(200);
    const third = await teamJob();
    expect(third.body.data.selected_driver_id).toBe(nearest.id);
    expect(third.body.data.dispatch.decision.exclusions).toContainEqual(expect.objectContaining({ driver_id: far.id, reason: 'not_available' }));
  });
});
