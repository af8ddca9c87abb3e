import { beforeAll, describe, expect, it } from 'vitest';
import { dispatchDeps } from '../../../engine/dispatch/dispatch-deps.ts';
import type { DispatchRow } from '../../../engine/dispatch/dispatch-record.ts';
import { DISPATCH_QUEUE, scheduleDispatch } from '../../../engine/dispatch/scheduled-dispatch.ts';
import type { CommandContext } from '../../../engine/engine.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { useOneSite } from '../../support/one-site.ts';
import { sleep, waitFor } from '../../support/wait-for.ts';
import { createDriver, createVehicle, jobAt, type TestDriver } from '../../http/dispatch-fixtures.ts';

/**
 * BullMQ adds a scheduled dispatch's due job before the transaction that stores the record commits. A dispatch due
 * at once whose transaction is still open when the job runs (another process's worker: here a command on another
 * key, which the job's own command does not wait for) must still be carried out, and one whose transaction rolled
 * back must end without retries.
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });
const PARIS = { lat: 48.8566, lng: 2.3522 };
let driver: TestDriver;

beforeAll(async () => {
  const vehicle = await createVehicle(site.acme);
  driver = await createDriver(site.server, site.acme, { name: 'Early Eve', at: PARIS, vehicleId: vehicle });
}, 60_000);

const ctx = (): CommandContext => ({ siteId: site.acme.site.id, actor: { userId: site.acme.users.dispatcher.id, applicationId: null, requestId: null, role: 'dispatcher' } });

/** Schedules `jobId` for now to the driver, then keeps the transaction open `holdMs`, then commits or fails; the dispatch id and how the command ended. */
async function scheduleAndHold(jobId: string, holdMs: number, outcome: 'commit' | 'roll back'): Promise<{ dispatchId: string; error: unknown }> {
  let dispatchId = '';
  const { services } = site.server;
  const work = services.engine.command(ctx(), `test:hold-${jobId}`, async (scope) => {
    const plan = { driver_id: driver.id, vehicle_id: null, route_id: null, strategy: null, require_confirmation: false };
    const row: DispatchRow = await scheduleDispatch(dispatchDeps(services), scope, { jobId, method: 'manual', teamId: null, dispatchAt: scope.clock.now(), plan });
    dispatchId = row.id;
    await sleep(holdMs);
    if (outcome === 'roll back') throw new Error('rolled back on purpose');
  });
  const error: unknown = await work.then(() => null, (failed: unknown) => failed);
  return { dispatchId, error };
}

const jobPhase = async (jobId: string) =>
  (await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) => em.execute<{ phase: string; driver_user_id: string | null }[]>('select phase, driver_user_id from job where id = ?', [jobId])))[0]!;

describe('a scheduled dispatch due before its transaction commits (BullMQ)', () => {
  it('runs again once the transaction committed, and assigns the job', async () => {
    const job = await jobAt(site.acme.as.dispatcher, PARIS);
    const { dispatchId, error } = await scheduleAndHold(job.id, 1500, 'commit');
    expect(error).toBeNull();
    await waitFor('the early due job, run again', async () => (await jobPhase(job.id)).driver_user_id === driver.id, 20_000);
    expect(await jobPhase(job.id)).toEqual({ phase: 'assigned', driver_user_id: driver.id });
    // The queue marks the run done just after its command committed.
    await waitFor('the due job completed', async () => (await site.server.services.queue.getJob(DISPATCH_QUEUE, `dispatch.${dispatchId}`))?.status === 'completed', 10_000);
    const queued = await site.server.services.queue.getJob(DISPATCH_QUEUE, `dispatch.${dispatchId}`);
    // Its first run came while the transaction was open (so the race was exercised), a later one did the work.
    expect(queued!.attemptsStarted).toBeGreaterThan(1);
    const answer = await site.acme.as.dispatcher.get<{ data: { status: string; is_active: boolean } }>(`/api/dispatch?id=${dispatchId}`);
    expect(answer.body.data.status).not.toBe('pending');
  }, 60_000);

  it('ends at its first run when the transaction rolled back, leaving the job unassigned', async () => {
    const job = await jobAt(site.acme.as.dispatcher, PARIS);
    const { dispatchId, error } = await scheduleAndHold(job.id, 300, 'roll back');
    expect(String(error)).toContain('rolled back on purpose');
    await waitFor('the due job of the rolled-back schedule', async () => (await site.server.services.queue.getJob(DISPATCH_QUEUE, `dispatch.${dispatchId}`))?.status === 'completed', 20_000);
    const queued = await site.server.services.queue.getJob(DISPATCH_QUEUE, `dispatch.${dispatchId}`);
    expect(queued?.attemptsStarted).toBeLessThanOrEqual(2);
    expect(await jobPhase(job.id)).toEqual({ phase: 'unassigned', driver_user_id: null });
  }, 60_000);
});
