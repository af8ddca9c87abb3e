import { beforeAll, describe, expect, it } from 'vitest';
import { DISPATCH_QUEUE } from '../../../engine/dispatch/scheduled-batch.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { useOneSite } from '../../support/one-site.ts';
import { deleteRedisKeys } from '../../support/redis-keys.ts';
import { waitFor } from '../../support/wait-for.ts';
import { createDriver, createTeam, createVehicle, jobAt } from '../../http/dispatch-fixtures.ts';

/**
 * Redis keeps nothing on disk: a restart loses every delayed job, scheduled dispatches' included. The pending record
 * in PostgreSQL is what was acknowledged, so it must still be carried out: the sweep adds its due job again once it
 * is `REQUEUE_GRACE_SECONDS` overdue. Redis losing its data is this server's dispatch queue keys deleted (its own
 * prefix only).
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000', REQUEUE_GRACE_SECONDS: '1' });
const PARIS = { lat: 48.8566, lng: 2.3522 };
const near = (km: number) => ({ lat: PARIS.lat + km / 111, lng: PARIS.lng });
let vehicle: string;

beforeAll(async () => {
  vehicle = await createVehicle(site.acme);
}, 60_000);

type One<T> = { data: T };
type Dispatch = { id: string; status: string; job_id: string | null };

const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
const loseRedisQueue = () => deleteRedisKeys(site.server.services.redis!, `${site.server.services.config.redisPrefix}:${DISPATCH_QUEUE}`);
const jobRow = (jobId: string) => site.acme.as.dispatcher.get<One<{ phase: string; driver_user_id: string | null }>>(`/api/job/${jobId}`).then((r) => r.body.data);

async function dispatchMoves(jobId: string): Promise<number> {
  const rows = await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) =>
    em.execute<{ n: string }[]>("select count(*) as n from audit_record where entity_id = ? and action = 'state_change' and new_data->>'event' = 'job.dispatch'", [jobId]),
  );
  return Number(rows[0]!.n);
}

describe('scheduled dispatches whose queue jobs Redis lost', () => {
  it('a scheduled assignment is carried out once it is overdue, and only once', async () => {
    const driver = await createDriver(site.server, site.acme, { name: 'Lost Lena', at: PARIS, vehicleId: vehicle });
    const job = await jobAt(site.acme.as.dispatcher, PARIS);
    const scheduled = await site.acme.as.dispatcher.post<One<{ dispatch: Dispatch }>>('/api/dispatch/assign', { job_id: job.id, driver_id: driver.id, start_at: inSeconds(2) });
    expect(scheduled.status).toBe(200);
    await loseRedisQueue();
    expect(await site.server.services.queue.getJob(DISPATCH_QUEUE, `dispatch.${scheduled.body.data.dispatch.id}`)).toBeNull();

    await waitFor('the lost scheduled dispatch, carried out', async () => (await jobRow(job.id)).driver_user_id === driver.id, 15_000);
    expect(await dispatchMoves(job.id)).toBe(1);
    const record = await site.acme.as.dispatcher.get<One<Dispatch>>(`/api/dispatch?id=${scheduled.body.data.dispatch.id}`);
    expect(record.body.data.status).not.toBe('pending');
  }, 60_000);

  it('a scheduled bulk distribution is carried out as one batch', async () => {
    const team = await createTeam(site.acme, 'Lost bulk team');
    const a = await createDriver(site.server, site.acme, { name: 'Lost A', at: near(1), vehicleId: vehicle, teamIds: [team] });
    const b = await createDriver(site.server, site.acme, { name: 'Lost B', at: near(20), vehicleId: vehicle, teamIds: [team] });
    const jobs = [await jobAt(site.acme.as.dispatcher, near(1)), await jobAt(site.acme.as.dispatcher, near(20))];
    const scheduled = await site.acme.as.dispatcher.post<One<{ scheduled: boolean }>>('/api/dispatch/bulk-distribute', {
      job_ids: jobs.map((j) => j.id), team_id: team, optimize_routes: true, start_at: inSeconds(2),
    });
    expect(scheduled.body.data.scheduled).toBe(true);
    await loseRedisQueue();

    await waitFor('the lost bulk distribution, carried out', async () => (await Promise.all(jobs.map((j) => jobRow(j.id)))).every((j) => j.phase === 'assigned'), 15_000);
    expect([(await jobRow(jobs[0]!.id)).driver_user_id, (await jobRow(jobs[1]!.id)).driver_user_id]).toEqual([a.id, b.id]);
    for (const job of jobs) expect(await dispatchMoves(job.id)).toBe(1);
  }, 60_000);

  it('a scheduled route dispatch is carried out', async () => {
    const driver = await createDriver(site.server, site.acme, { name: 'Lost Route Rob', at: PARIS, vehicleId: vehicle });
    const job = await jobAt(site.acme.as.dispatcher, PARIS);
    const created = await site.acme.as.dispatcher.post<One<{ id: string }>>('/api/route', { name: 'Lost route', service_date: '2030-01-03', job_ids: [job.id] });
    const scheduled = await site.acme.as.dispatcher.post<One<{ scheduled: boolean }>>('/api/dispatch/route', { route_id: created.body.data.id, driver_id: driver.id, start_at: inSeconds(2) });
    expect(scheduled.body.data.scheduled).toBe(true);
    await loseRedisQueue();

    await waitFor('the lost route dispatch, carried out', async () => (await jobRow(job.id)).driver_user_id === driver.id, 15_000);
    expect(await dispatchMoves(job.id)).toBe(1);
  }, 60_000);
});
