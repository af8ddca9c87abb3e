import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide } from '../../engine/dispatch/decide.ts';
import { loadJobTarget } from '../../engine/dispatch/job-target.ts';
import { createMappingProvider } from '../../engine/mapping/create-mapping-provider.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { createJob } from '../support/job-fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { createDriver, createTeam, createVehicle, jobAt } from './dispatch-fixtures.ts';

type One<T> = { data: T };
type Decision = { exclusions: { driver_id: string; reason: string }[]; winner: { driver_id: string } | null };
type TeamOutcome = { selected_driver_id: string; dispatch: { id: string; decision: Decision } };

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

  it('a job that signs up a new customer leaves the fleet version alone; a new driver moves it', async () => {
    // Dispatches already ran on this site, so its version row exists and a bump would show.
    const before = await fleetVersion(acme.site.id);
    await createJob(acme.as.dispatcher, { customer_email: 'first-time-buyer@shop.example', customer_first_name: 'Nova' });
    expect(await fleetVersion(acme.site.id)).toBe(before);
    await createDriver(server, acme, { name: 'New Ned', at: near(2), vehicleId: vehicle });
    expect(await fleetVersion(acme.site.id)).toBeGreaterThan(before);
  });

  it('reads what other processes commit (availability, position, open-job load) and never keeps a write that rolled back', async () => {
    const team = await createTeam(acme, 'Changes team');
    const first = await createDriver(server, acme, { name: 'First Fay', at: near(0.5), vehicleId: vehicle, teamIds: [team], maxLoad: 1 });
    const second = await createDriver(server, acme, { name: 'Second Sol', at: near(3), vehicleId: vehicle, teamIds: [team] });
    const dispatchAt = async (point: { lat: number; lng: number }) =>
      (await acme.as.dispatcher.post<One<TeamOutcome>>('/api/dispatch/team/job', { job_id: (await jobAt(acme.as.dispatcher, point)).id, team_id: team })).body.data;
    // Straight SQL in its own transaction: what another server process's writes look like to this one.
    const write = (query: string, params: unknown[]) => inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) => em.execute(query, params));

    const one = await dispatchAt(PARIS);
    expect(one.selected_driver_id).toBe(first.id);
    // At max load now: the next decision leaves the first driver out for capacity.
    const two = await dispatchAt(PARIS);
    expect(two.selected_driver_id).toBe(second.id);
    expect(two.dispatch.decision.exclusions).toContainEqual(expect.objectContaining({ driver_id: first.id, reason: 'capacity' }));

    // Another process completes the first driver's job and moves the second driver far away.
    await write("update job set phase = 'completed' where id = (select job_id from dispatch where id = ?)", [one.dispatch.id]);
    await write('update driver_state set last_lat = ?, last_lng = ? where site_id = ? and user_id = ?', [near(30).lat, near(30).lng, acme.site.id, second.id]);
    const three = await dispatchAt(near(3));
    expect(three.selected_driver_id).toBe(first.id);
    await write("update job set phase = 'completed' where id = (select job_id from dispatch where id = ?)", [three.dispatch.id]);

    // A transaction that takes the first driver offline, decides (and sees it), then rolls back.
    const mapping = createMappingProvider(null);
    const job = (await jobAt(acme.as.dispatcher, PARIS)).id;
    const rolledBack = inTenantScope(server.services.db.orm, { siteId: acme.site.id }, async (em) => {
      await em.execute("update driver_state set availability = 'offline' where site_id = ? and user_id = ?", [acme.site.id, first.id]);
      await em.execute("update job set phase = 'completed' where id = (select job_id from dispatch where id = ?)", [two.dispatch.id]);
      const target = await loadJobTarget(em, acme.site.id, job);
      const inside = await decide(em, acme.site.id, { job: target, strategy: 'eta', teamId: team, now: new Date(), mapping, requireVehicle: true });
      expect(inside.decision.exclusions).toContainEqual(expect.objectContaining({ driver_id: first.id, reason: 'not_available' }));
      throw new Error('roll back');
    });
    await expect(rolledBack).rejects.toThrow('roll back');
    const after = await acme.as.dispatcher.post<One<TeamOutcome>>('/api/dispatch/team/job', { job_id: job, team_id: team });
    expect(after.body.data.selected_driver_id).toBe(first.id);
  });
});
