import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { sleep, waitFor } from '../support/wait-for.ts';
import { createDriver, createVehicle, jobAt, type TestDriver } from '../http/dispatch-fixtures.ts';

const PARIS = { lat: 48.8566, lng: 2.3522 };

let server: TestServer;
let env: Record<string, string>;
const started: ServerProcess[] = [];

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_POINTS: '100000' });
  env = {
    DATABASE_URL: server.databaseUrl,
    REDIS_URL: server.services.config.redisUrl!,
    // The processes' own queue keys: the in-process test server must not run their delayed dispatches.
    REDIS_PREFIX: `test-proc-${randomBytes(4).toString('hex')}`,
    SECRET_KEY: server.services.config.secretKey,
    RATE_LIMIT_POINTS: '100000',
  };
}, 60_000);
afterAll(async () => {
  await Promise.all(started.map((p) => p.kill('SIGKILL')));
  await server.close();
});

async function start(): Promise<ServerProcess> {
  const process = await startServerProcess(env);
  started.push(process);
  return process;
}

const sql = <T>(site: SiteFixture, query: string, params: unknown[] = []) =>
  inTenantScope(server.services.db.orm, { siteId: site.site.id }, (em) => em.execute<T[]>(query, params));

async function drivers(site: SiteFixture, count: number, vehicle: string): Promise<TestDriver[]> {
  const made: TestDriver[] = [];
  for (let i = 0; i < count; i++) made.push(await createDriver(server, site, { name: `Driver ${i}`, at: { lat: PARIS.lat + i / 1000, lng: PARIS.lng }, vehicleId: vehicle }));
  return made;
}

describe('dispatch across server processes', () => {
  it('50 drivers claim one pool job at once through two processes: exactly one wins, 49 get 409, one dispatch record', async () => {
    const site = await createSiteFixture(server, 'claims');
    const vehicle = await createVehicle(site);
    const fleet = await drivers(site, 50, vehicle);
    const job = await jobAt(site.as.dispatcher, PARIS);
    const posted = await site.as.dispatcher.post<{ data: { succeeded: { id: string }[] } }>('/api/dispatch/pool', { job_ids: [job.id] });
    const offer = posted.body.data.succeeded[0]!.id;
    const processes = [await start(), await start()];
    const responses = await Promise.all(
      fleet.map((driver, i) => processes[i % 2]!.client('claims').as({ accessToken: driver.token }).post<{ code?: string; data?: { dispatch: { assigned_to_driver_id: string } } }>('/api/dispatch/claim', { dispatch_id: offer })),
    );
    const won = responses.filter((r) => r.status === 200);
    const lost = responses.filter((r) => r.status === 409);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(49);
    expect(new Set(lost.map((r) => r.body.code))).toEqual(new Set(['ALREADY_CLAIMED']));
    const winner = won[0]!.body.data!.dispatch.assigned_to_driver_id;
    const records = await sql<{ id: string; assigned_to_driver_id: string; status: string }>(site, 'select id, assigned_to_driver_id, status from dispatch where job_id = ?', [job.id]);
    expect(records).toEqual([{ id: offer, assigned_to_driver_id: winner, status: 'processing' }]);
    const [row] = await sql<{ driver_user_id: string; phase: string }>(site, 'select driver_user_id, phase from job where id = ?', [job.id]);
    expect(row).toEqual({ driver_user_id: winner, phase: 'assigned' });
    await Promise.all(processes.map((p) => p.kill()));
  }, 120_000);

  it('round-robin over 5 drivers for 20 jobs gives 4 each in order, and the cursor survives a restart', async () => {
    const site = await createSiteFixture(server, 'rr');
    const vehicle = await createVehicle(site);
    const fleet = await drivers(site, 5, vehicle);
    const order = fleet.map((d) => d.id).sort();
    const jobs = [];
    for (let i = 0; i < 20; i++) jobs.push(await jobAt(site.as.dispatcher, PARIS));
    const chosen: string[] = [];
    for (const half of [jobs.slice(0, 10), jobs.slice(10)]) {
      const process = await start();
      const client = process.client('rr').as({ apiKey: site.keys.dispatcher });
      for (const job of half) {
        const done = await client.post<{ data: { dispatch: { assigned_to_driver_id: string; method: string } } }>('/api/dispatch/assign', { job_id: job.id, method: 'round-robin' });
        expect(done.status).toBe(200);
        chosen.push(done.body.data.dispatch.assigned_to_driver_id);
      }
      await process.kill('SIGKILL');
    }
    expect(chosen).toEqual([...order, ...order, ...order, ...order]);
    const [cursor] = await sql<{ last_driver_id: string }>(site, "select last_driver_id from dispatch_cursor where scope_key = 'site'");
    expect(cursor!.last_driver_id).toBe(order[4]);
  }, 120_000);

  it('a delayed dispatch fires once, after a restart in between', async () => {
    const site = await createSiteFixture(server, 'later');
    const vehicle = await createVehicle(site);
    const [driver] = await drivers(site, 1, vehicle);
    const job = await jobAt(site.as.dispatcher, PARIS);
    const first = await start();
    const startAt = new Date(Date.now() + 4000).toISOString();
    const scheduled = await first.client('later').as({ apiKey: site.keys.dispatcher }).post<{ data: { scheduled: boolean; dispatch: { id: string; status: string; dispatch_at: string } } }>('/api/dispatch/assign', {
      job_id: job.id,
      driver_id: driver!.id,
      start_at: startAt,
    });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body.data).toMatchObject({ scheduled: true, dispatch: { status: 'pending', dispatch_at: startAt } });
    await first.kill('SIGKILL');
    expect((await sql<{ phase: string }>(site, 'select phase from job where id = ?', [job.id]))[0]!.phase).toBe('unassigned');

    await start();
    await waitFor('the delayed dispatch', async () => (await sql<{ phase: string }>(site, 'select phase from job where id = ?', [job.id]))[0]!.phase === 'assigned', 20_000);
    expect(Date.now()).toBeGreaterThanOrEqual(new Date(startAt).getTime());
    // Give a duplicate run time to show itself, then count the moves and the records.
    await sleep(1500);
    const moves = await sql<{ n: string }>(site, "select count(*) as n from audit_record where entity_id = ? and action = 'state_change' and new_data->>'event' = 'job.dispatch'", [job.id]);
    expect(Number(moves[0]!.n)).toBe(1);
    const records = await sql<{ id: string; status: string; assigned_to_driver_id: string; dispatched_at: Date | null }>(site, 'select id, status, assigned_to_driver_id, dispatched_at from dispatch where job_id = ?', [job.id]);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ id: scheduled.body.data.dispatch.id, status: 'processing', assigned_to_driver_id: driver!.id });
  }, 120_000);
});
