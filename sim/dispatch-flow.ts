import { notifyPoolPost, takeJob, withinReach } from './driver-behaviour.ts';
import { keyedDraw } from './random.ts';
import type { RunContext } from './run-context.ts';
import { abandon, abandonStranded, driverAhead, NO_DRIVER_LEFT, queueAhead, scheduleDispatch, SLOW_RETRY_FACTOR, waitsForFreeSlot, wakeWaiting } from './dispatch-queue.ts';
import { CREATED_AFTER_LAST_SHIFT } from './plan.ts';
import { acceptOffer } from './strategies.ts';
import type { DriverState, JobState } from './world.ts';

/** The office side of the day: jobs are created over REST and dispatched by the strategy under test. */

type JobBody = { id: string; stops: { id: string; type: string }[] };

/**
 * A new job is created while the drivers' calls run, before and after it (creating it reads no driver, and nothing a
 * driver does reads it before it is dispatched): the loop does not wait for it. Its dispatch is a decision and waits
 * for every queued call first, this creation included. Behind jobs that wait for a free slot it joins their queue
 * instead: the fleet is full, and the next freed slot is theirs.
 *
 * In process, the next job's creation then starts while this one is dispatched, rather than at its own time after
 * the dispatch: a dispatch alone otherwise leaves one of the machine's two cores idle. The next job is not dispatched
 * before its time, and a dispatch does not depend on a job no driver has (the engine counts a driver's open jobs;
 * a new job is nobody's); creations keep their order on the office's chain, so ids keep it too.
 */
export async function jobCreated(run: RunContext, job: JobState): Promise<void> {
  const { plan } = job;
  run.recorder?.event(run.now, 'job_created', { job: plan.name, pickup: plan.pickup, dropoff: plan.dropoff });
  queueCreation(run, job);
  if (plan.impossible === CREATED_AFTER_LAST_SHIFT) {
    // Reported impossible before the run, so it must not be done either: a driver still out after the shift (busy,
    // or staying for the jobs created during it) would otherwise take it, and it counted as completed and impossible.
    abandon(run, job, 'not dispatched: every shift had ended');
    return;
  }
  job.status = 'waiting';
  run.waiting.add(job);
  if (queueAhead(run, job)) {
    job.lastFailure = 'waiting behind earlier jobs for a free driver';
    // After the last shift no slot will free up to wake it.
    abandonStranded(run);
    return;
  }
  job.nextDispatch = { at: run.now, token: 0 };
  await run.flush();
  const next = run.createdAfter?.get(job);
  if (next) queueCreation(run, next);
  await dispatch(run, job);
}

/** Queues the job's `POST /job` on the office's chain, once. */
function queueCreation(run: RunContext, job: JobState): void {
  if (job.creationQueued) return;
  job.creationQueued = true;
  const { plan } = job;
  run.act('office', async () => {
    const created = await run.api.call<JobBody>('POST', '/api/job', {
      // A hundred regular customers: a new customer account per job would measure sign-ups, not dispatch.
      customer_email: `customer-${Number(plan.name.slice(1)) % 100}@sim.example`,
      customer_first_name: 'Sim',
      customer_last_name: plan.name,
      stops: [
        { type: 'pickup', street_address: `${plan.name} pickup`, point: plan.pickup },
        { type: 'dropoff', street_address: `${plan.name} dropoff`, point: plan.dropoff },
      ],
    });
    job.id = created.id;
    job.stopIds = [created.stops[0]!.id, created.stops[1]!.id];
    run.byJobId.set(created.id, job);
    await run.afterJobCreated?.();
  });
}

export async function dispatch(run: RunContext, job: JobState): Promise<void> {
  job.nextDispatch = null;
  if (job.status !== 'waiting') return;
  const { site } = run.plan.scenario;
  job.attempts += 1;
  const outcome = await run.strategy.dispatch(run.api, { jobId: job.id!, teamId: run.fleet.teamId, requireConfirmation: site.require_confirmation });
  run.recorder?.event(run.now, 'dispatch', { job: job.plan.name, attempt: job.attempts, outcome: outcome.kind, ...(outcome.kind === 'none' ? { reason: outcome.reason } : {}) });
  if (outcome.kind === 'pooled') {
    job.status = 'pooled';
    job.dispatchId = outcome.dispatchId;
    notifyPoolPost(run, job);
    return;
  }
  if (outcome.kind === 'none') {
    retryLater(run, job, `no driver found (${outcome.reason})`, waitsForFreeSlot(run, outcome.reason) ? 'slot' : 'none');
    // Refused for a reason a free driver does not change (outside every zone: a driver with room was there): the
    // slot that may have woken it goes on to the next job waiting for one.
    if (outcome.reason.startsWith('NO_ELIGIBLE_DRIVER:')) wakeWaiting(run, 1, job);
    return;
  }
  const driver = run.byUserId.get(outcome.driverUserId);
  if (!driver) throw new Error(`the engine chose ${outcome.driverUserId}, who is not in the simulated fleet`);
  job.dispatchId = outcome.dispatchId;
  job.assignedAt = run.now;
  run.assignments.push({ t: run.now, job: job.plan.name, driver: driver.plan.name, via: 'dispatch', accepted: !outcome.pending });
  if (outcome.pending) {
    job.status = 'offered';
    const [min, max] = run.plan.scenario.fleet.acceptance.offer_response_s;
    const delay = Math.round(min + (max - min) * keyedDraw(run.plan.seed, `${driver.plan.name}:${job.plan.name}:respond:${job.attempts}`));
    run.schedule(run.now + delay, { type: 'offer', driver, job });
    return;
  }
  if (!withinReach(run, driver, job)) {
    giveBack(run, driver, job, 'out of reach');
    return;
  }
  takeJob(run, driver, job);
}

/** The driver answers an offer: yes (accept) or no (give the job back so it is dispatched again). */
export function answerOffer(run: RunContext, driver: DriverState, job: JobState): void {
  const rate = run.plan.scenario.fleet.acceptance.offer_accept_rate;
  const willing = keyedDraw(run.plan.seed, `${driver.plan.name}:${job.plan.name}:accept:${job.attempts}`) < rate;
  if (!willing || !withinReach(run, driver, job)) {
    giveBack(run, driver, job, willing ? 'out of reach' : 'declined');
    return;
  }
  const dispatchId = job.dispatchId!;
  run.act(driver, () => acceptOffer(run.api, driver.member.credential, dispatchId));
  const last = run.assignments.findLast((a) => a.job === job.plan.name);
  if (last) last.accepted = true;
  takeJob(run, driver, job);
}

function giveBack(run: RunContext, driver: DriverState, job: JobState, why: string): void {
  const jobId = job.id;
  run.act(driver, () => run.api.call('POST', '/api/driver/job/return', { job_id: jobId }, driver.member.credential));
  job.declines += 1;
  job.driver = null;
  job.dispatchId = null;
  run.recorder?.event(run.now, 'returned', { job: job.plan.name, driver: driver.plan.name, why });
  retryLater(run, job, `returned by drivers (${why})`, 'returned');
  // The driver's slot is free again: the next waiting job may have it (this one is offered again after retry_s).
  wakeWaiting(run, 1, job);
}

/**
 * A job nobody took waits. Returned by a driver: offered again after `retry_s` (to someone else, or to the same
 * driver later), until `max_returns`.
 * The whole fleet full (`slot`): offered again only when a driver frees a slot (`wakeWaiting`), with no call before.
 * Nobody eligible for another reason: a slow retry.
 */
function retryLater(run: RunContext, job: JobState, reason: string, kind: 'slot' | 'none' | 'returned'): void {
  const { site } = run.plan.scenario;
  job.status = 'waiting';
  job.lastFailure = reason;
  job.slowRetry = kind === 'none';
  run.waiting.add(job);
  const anyDriverAhead = driverAhead(run);
  if ((kind === 'returned' && job.declines >= site.max_returns) || !anyDriverAhead) {
    abandon(run, job, anyDriverAhead ? `${reason}, ${job.declines} times` : `${reason}${NO_DRIVER_LEFT}`);
    return;
  }
  if (kind === 'slot') return;
  scheduleDispatch(run, job, run.now + (kind === 'returned' ? site.retry_s : site.retry_s * SLOW_RETRY_FACTOR));
}
