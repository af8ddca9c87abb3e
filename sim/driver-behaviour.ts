import { abandonStranded, wakeWaiting } from './dispatch-queue.ts';
import { haversineM, round6 } from './geo.ts';
import { keyedDraw } from './random.ts';
import type { RunContext } from './run-context.ts';
import { SimApiError } from './site-api.ts';
import { claimPoolJob, listPool } from './strategies.ts';
import { drivingM, drivingS } from './travel.ts';
import { isIdle, type DriverState, type JobState, type Visit } from './world.ts';

/**
 * The driver model: a person who comes on shift, drives each assigned job's stops in order at the scenario's speed
 * for the time of day, works each stop for its service time, and moves the stops through the workflow as a driver
 * app would. Pool drivers claim the nearest job they see when free. Every action is a REST call as that driver.
 *
 * The model's own state changes at once, in event order; the driver's REST calls are queued on the driver
 * (`run.act`), so drivers' calls overlap while each driver's stay in order. Decisions flush the queue first.
 */

export function shiftStart(run: RunContext, driver: DriverState): void {
  driver.online = true;
  driver.onlineSince = run.now;
  driver.trace.push([run.now, driver.position.lat, driver.position.lng]);
  setAvailability(run, driver, 'available');
  reportPosition(run, driver);
  if (run.strategy.usesPool) run.schedule(run.now + 1, { type: 'pool_look', driver });
  wakeWaiting(run, run.plan.scenario.fleet.max_load ?? 1);
}

export function shiftEnd(run: RunContext, driver: DriverState): void {
  driver.shiftOver = true;
  if (isIdle(driver)) whenIdle(run, driver);
}

/** A recorded GPS fix replayed: the driver is where the trace says and reports it (distance counts as driven). */
export function followTrack(run: RunContext, driver: DriverState, point: { lat: number; lng: number }): void {
  if (!driver.online) return;
  driver.meters += haversineM(driver.position, point);
  driver.position = point;
  driver.trace.push([run.now, point.lat, point.lng]);
  reportPosition(run, driver);
}

/** A new job for this driver (assigned, accepted or claimed): queued behind the ones they have. */
export function takeJob(run: RunContext, driver: DriverState, job: JobState): void {
  job.driver = driver;
  job.status = 'assigned';
  run.waiting.delete(job);
  const { pickup, dropoff, pickupServiceS, dropoffServiceS } = job.plan;
  driver.queue.push({ job, stop: 'pickup', point: pickup, serviceS: pickupServiceS }, { job, stop: 'dropoff', point: dropoff, serviceS: dropoffServiceS });
  if (driver.current === null) startNextLeg(run, driver);
}

/** Is this job's pickup within the driver's reach from where they are? Beyond it, they give the job back. */
export function withinReach(run: RunContext, driver: DriverState, job: JobState): boolean {
  return drivingM(run.plan.scenario, driver.position, job.plan.pickup) <= run.plan.scenario.fleet.acceptance.max_pickup_m;
}

export function arrive(run: RunContext, driver: DriverState): void {
  const current = driver.current!;
  const { visit } = current;
  driver.position = visit.point;
  driver.meters += current.meters;
  visit.job.meters += current.meters;
  driver.trace.push([run.now, visit.point.lat, visit.point.lng]);
  reportPosition(run, driver);
  moveStop(run, driver, visit, 'arrived');
  const { job } = visit;
  if (visit.stop === 'pickup') job.pickupArrivedAt = run.now;
  // Early at a stop with a ready time (Li & Lim windows, at the pickup and at the delivery): the driver waits, then
  // works the stop. Deadlines are checked at this start of service, which Li & Lim's due times bound.
  const serviceStart = Math.max(run.now, visit.stop === 'pickup' ? job.plan.pickupReady : job.plan.dropoffReady);
  if (visit.stop === 'pickup') job.pickupStartedAt = serviceStart;
  else job.dropoffStartedAt = serviceStart;
  run.schedule(serviceStart + visit.serviceS, { type: 'service_done', driver });
}

export function serviceDone(run: RunContext, driver: DriverState): void {
  const { visit } = driver.current!;
  moveStop(run, driver, visit, 'completed');
  driver.current = null;
  if (visit.stop === 'dropoff') {
    const job = visit.job;
    job.status = 'done';
    job.deliveredAt = run.now;
    driver.jobsDone += 1;
    const pay = run.plan.scenario.fleet.pay;
    driver.earningsCents += pay.per_job_cents + Math.round((job.meters / 1000) * pay.per_km_cents);
    run.recorder?.event(run.now, 'job_completed', { job: job.plan.name, driver: driver.plan.name });
    wakeWaiting(run, 1);
  }
  if (driver.queue.length > 0) startNextLeg(run, driver);
  else whenIdle(run, driver);
}

/** Pool drivers look at the pool when free; a free driver after the shift goes home unless work still waits. */
export function whenIdle(run: RunContext, driver: DriverState): void {
  if (driver.busySince !== null) {
    driver.busyIntervals.push([driver.busySince, run.now]);
    driver.busySince = null;
  }
  if (!driver.online) return;
  if (run.strategy.usesPool) {
    run.schedule(run.now + reactionS(run, driver, 'look'), { type: 'pool_look', driver });
    return;
  }
  if (driver.shiftOver) lingerOrLeave(run, driver);
}

/** After the shift: stay while jobs created before it ended still wait for a driver, else go offline. */
export function lingerOrLeave(run: RunContext, driver: DriverState): void {
  if (!driver.online || !isIdle(driver)) return;
  const owed = [...run.waiting].some((job) => job.plan.createdAt < driver.plan.shiftEnd && !job.plan.impossible);
  if (owed) {
    run.schedule(run.now + run.plan.scenario.site.retry_s, run.strategy.usesPool ? { type: 'pool_look', driver } : { type: 'linger', driver });
    return;
  }
  driver.online = false;
  driver.onlineIntervals.push([driver.onlineSince!, run.now]);
  driver.onlineSince = null;
  setAvailability(run, driver, 'offline');
  abandonStranded(run);
}

/** A free pool driver reads the pool and claims the nearest job within reach; nothing there: wait for posts. */
export async function poolLook(run: RunContext, driver: DriverState): Promise<void> {
  if (!driver.online || !isIdle(driver)) return;
  const entries = await listPool(run.api, driver.member.credential);
  let best: { job: JobState; dispatchId: string; meters: number } | null = null;
  for (const entry of entries) {
    const job = run.byJobId.get(entry.jobId);
    if (!job || !withinReach(run, driver, job)) continue;
    const meters = haversineM(driver.position, job.plan.pickup);
    if (!best || meters < best.meters) best = { job, dispatchId: entry.dispatchId, meters };
  }
  if (best) {
    best.job.dispatchId = best.dispatchId;
    await claim(run, driver, best.job);
  } else if (driver.shiftOver) {
    lingerOrLeave(run, driver);
  }
}

/** A claim: the engine decides who wins; the loser looks again. */
export async function claim(run: RunContext, driver: DriverState, job: JobState): Promise<void> {
  if (!driver.online || !isIdle(driver) || job.status !== 'pooled' || !job.dispatchId) return;
  const won = await claimPoolJob(run.api, driver.member.credential, job.dispatchId);
  run.recorder?.event(run.now, won ? 'claim_won' : 'claim_lost', { job: job.plan.name, driver: driver.plan.name });
  if (!won) {
    run.schedule(run.now + 1, { type: 'pool_look', driver });
    return;
  }
  job.assignedAt = run.now;
  run.assignments.push({ t: run.now, job: job.plan.name, driver: driver.plan.name, via: 'claim', accepted: true });
  takeJob(run, driver, job);
}

/** Free pool drivers near a new pool job react to it (the live feed tells them), nearest first. */
export function notifyPoolPost(run: RunContext, job: JobState): void {
  const radius = run.plan.scenario.fleet.acceptance.pool_radius_m;
  const near = run.drivers
    .filter((d) => d.online && isIdle(d) && haversineM(d.position, job.plan.pickup) <= radius)
    .sort((a, b) => haversineM(a.position, job.plan.pickup) - haversineM(b.position, job.plan.pickup))
    .slice(0, 3);
  for (const driver of near) run.schedule(run.now + reactionS(run, driver, `claim:${job.plan.name}`), { type: 'claim', driver, job });
}

function startNextLeg(run: RunContext, driver: DriverState): void {
  const visit = driver.queue.shift()!;
  const from = driver.position;
  const meters = drivingM(run.plan.scenario, from, visit.point);
  const seconds = drivingS(run.plan.scenario, meters, run.now);
  driver.current = { visit, from, departedAt: run.now, arriveAt: run.now + seconds, meters };
  if (driver.busySince === null) driver.busySince = run.now;
  moveStop(run, driver, visit, 'enRoute');
  run.timeline.onLeg?.(driver.member, from, visit.point, run.now, run.now + seconds);
  run.schedule(run.now + seconds, { type: 'arrive', driver });
}

/** Reaction times drawn per driver and purpose from the seed: the same under every strategy. */
function reactionS(run: RunContext, driver: DriverState, purpose: string): number {
  const [min, max] = run.plan.scenario.fleet.acceptance.pool_claim_delay_s;
  return Math.round(min + (max - min) * keyedDraw(run.plan.seed, `${driver.plan.name}:${purpose}:${run.now}`));
}

function moveStop(run: RunContext, driver: DriverState, visit: Visit, to: 'enRoute' | 'arrived' | 'completed'): void {
  const stopId = visit.job.stopIds![visit.stop === 'pickup' ? 0 : 1];
  const body = { stop_id: stopId, workflow_state_id: run.fleet.stopStates[to] };
  run.act(driver, () => run.api.call('POST', '/api/driver/stop/state', body, driver.member.credential));
}

function reportPosition(run: RunContext, driver: DriverState): void {
  const point = round6(driver.position);
  const t = run.now;
  run.recorder?.event(t, 'position', { driver: driver.plan.name, lat: point.lat, lng: point.lng });
  run.act(driver, () => run.timeline.reportPosition(driver.member, point, t));
}

/** Availability moves through the driver's own endpoint; a driver the engine marked busy is freed first. */
function setAvailability(run: RunContext, driver: DriverState, availability: 'available' | 'offline'): void {
  run.recorder?.event(run.now, 'availability', { driver: driver.plan.name, availability });
  const put = () => run.api.call('PUT', '/api/driver/status', { availability }, driver.member.credential);
  run.act(driver, async () => {
    try {
      await put();
    } catch (error) {
      if (!(error instanceof SimApiError && error.code === 'INVALID_TRANSITION')) throw error;
      await run.api.call('PUT', '/api/driver/status', { availability: 'available' }, driver.member.credential);
      await put();
    }
  });
}
