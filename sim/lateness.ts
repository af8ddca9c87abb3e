import type { RunContext } from './run-context.ts';
import { drivingM, drivingS } from './travel.ts';
import type { DriverState, JobState } from './world.ts';

/**
 * Deadlines are met when the service STARTS by them, as Li & Lim's due times bound the start of service (the
 * service itself may run past them). A depot's due time, for fleets that return to it, is the driver's shift end.
 */
export type Lateness = {
  /** Completed jobs whose pickup and drop-off both started by their due times. */
  onTime: number;
  /** Stops whose service started after their due time, of any job that got that far. */
  latePickups: number;
  lateDeliveries: number;
  /** Drivers back at the depot (when the fleet returns to it) after their shift ended. */
  lateDepotReturns: number;
};

export function lateness(run: RunContext): Lateness {
  const done = run.jobs.filter((job) => job.status === 'done');
  return {
    onTime: done.filter((job) => !latePickup(job) && !lateDelivery(job)).length,
    latePickups: run.jobs.filter(latePickup).length,
    lateDeliveries: run.jobs.filter(lateDelivery).length,
    lateDepotReturns: run.drivers.filter((driver) => (homeTrip(run, driver)?.arriveAt ?? 0) > driver.plan.shiftEnd).length,
  };
}

/**
 * The way back to the depot of a driver who did any job, when the fleet returns to it (Li & Lim: the best-known
 * solutions count it): its meters, and when the driver is home, setting off when they last became free.
 */
export function homeTrip(run: RunContext, driver: DriverState): { meters: number; arriveAt: number } | null {
  const { scenario } = run.plan;
  if (!scenario.fleet.return_to_depot || driver.jobsDone === 0) return null;
  const meters = drivingM(scenario, driver.position, driver.plan.start);
  // A driver with a job done was busy at least once: their last busy interval ends when they last became free.
  const lastFree = driver.busyIntervals.at(-1)?.[1] ?? 0;
  return { meters, arriveAt: meters === 0 ? lastFree : lastFree + drivingS(scenario, meters, lastFree) };
}

const lateAt = (start: number | null, due: number): boolean => start !== null && start > due;
const latePickup = (job: JobState): boolean => lateAt(job.pickupStartedAt, job.plan.pickupDue);
const lateDelivery = (job: JobState): boolean => lateAt(job.dropoffStartedAt, job.plan.dropoffDue);
