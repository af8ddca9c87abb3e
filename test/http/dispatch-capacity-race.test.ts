import { Client } from 'pg';
import { expect, it } from 'vitest';
import { useOneSite } from '../support/one-site.ts';
import { urlFor } from '../support/postgres.ts';
import { waitFor } from '../support/wait-for.ts';
import { createDriver, createTeam, createVehicle, jobAt } from './dispatch-fixtures.ts';

/**
 * A driver's max_load is checked at write time under a lock of the driver's own: two dispatches decided on the same
 * load (both read it before either wrote) cannot both pass it, even when their jobs fall on different days (so they
 * take different driver-day locks). The test lines the two requests up behind a lock it holds on the `job` table.
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });

const PARIS = { lat: 48.8566, lng: 2.3522 };
const DAY_MS = 86_400_000;

/** A one-hour window on the pickup, `days` days from now at noon UTC. */
const windowIn = (days: number) => {
  const start = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS + days * DAY_MS + 12 * 3_600_000);
  return { after: start, before: new Date(start.getTime() + 3_600_000) };
};

/** Runs `requests` while the test holds a lock on the `job` table, released once all of them wait on a lock. */
async function linedUp<T>(locker: Client, requests: () => Promise<T>, waiting: number): Promise<T> {
  await locker.query('begin');
  await locker.query('lock table job in share row exclusive mode');
  const answers = requests();
  await waitFor(`${waiting} requests waiting on a lock`, async () => {
    const rows = await locker.query("select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'", [site.server.database]);
    return rows.rows[0].n >= waiting;
  }, 10_000);
  await locker.query('commit');
  return answers;
}

const openJobsOf = async (locker: Client, driverId: string) =>
  (await locker.query("select count(*)::int as n from job where driver_user_id = $1 and phase in ('assigned', 'in_progress') and deleted_at is null", [driverId])).rows[0].n;

it('two concurrent manual assignments to a driver with max_load 1, jobs on different days: one is dispatched, the other is 409 DRIVER_AT_CAPACITY', async () => {
  const vehicle = await createVehicle(site.acme, 'One-job van');
  const driver = await createDriver(site.server, site.acme, { name: 'Single Sam', at: PARIS, vehicleId: vehicle, maxLoad: 1 });
  const jobs = [await jobAt(site.acme.as.dispatcher, PARIS, windowIn(1)), await jobAt(site.acme.as.dispatcher, PARIS, windowIn(2))];
  const locker = new Client({ connectionString: urlFor(site.server.database, 'postgres') });
  await locker.connect();
  try {
    // Both requests read the driver's load (0) before either writes: their writes wait for the test's lock.
    const answers = await linedUp(locker, () => Promise.all(jobs.map((job) => site.acme.as.dispatcher.post<{ code?: string }>('/api/dispatch/assign', { job_id: job.id, driver_id: driver.id }))), 2);
    const outcomes = answers.map((answer) => [answer.status, answer.body.code ?? null]);
    expect(outcomes.sort()).toEqual([[200, null], [409, 'DRIVER_AT_CAPACITY']]);
    expect(await openJobsOf(locker, driver.id)).toBe(1);
  } finally {
    await locker.query('rollback').catch(() => undefined);
    await locker.end();
  }
}, 60_000);

it('two concurrent team dispatches that both pick the nearest driver, at max_load 1: the second goes to the next driver', async () => {
  const team = await createTeam(site.acme, 'Two of us');
  const vehicle = await createVehicle(site.acme, 'Team van');
  const near = await createDriver(site.server, site.acme, { name: 'Near Nia', at: PARIS, vehicleId: vehicle, teamIds: [team], maxLoad: 1 });
  const far = await createDriver(site.server, site.acme, { name: 'Far Flo', at: { lat: 48.95, lng: 2.5 }, vehicleId: vehicle, teamIds: [team] });
  const jobs = [await jobAt(site.acme.as.dispatcher, PARIS, windowIn(1)), await jobAt(site.acme.as.dispatcher, PARIS, windowIn(2))];
  const locker = new Client({ connectionString: urlFor(site.server.database, 'postgres') });
  await locker.connect();
  try {
    const dispatch = (jobId: string) => site.acme.as.dispatcher.post<{ data: { selected_driver_id: string } }>('/api/dispatch/team/job', { job_id: jobId, team_id: team });
    const answers = await linedUp(locker, () => Promise.all(jobs.map((job) => dispatch(job.id))), 2);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(answers.map((answer) => answer.body.data.selected_driver_id).sort()).toEqual([near.id, far.id].sort());
    expect(await openJobsOf(locker, near.id)).toBe(1);
  } finally {
    await locker.query('rollback').catch(() => undefined);
    await locker.end();
  }
}, 60_000);
