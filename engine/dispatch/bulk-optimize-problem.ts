import { slotsOn, type WorkerScheduleData } from '../fleet/schedule.ts';
import { parseAccessWindow } from '../mapping/access-window.ts';
import type { DistanceMatrix, LatLng } from '../mapping/mapping-provider.ts';
import type { RoutingJob, RoutingProblem, RoutingVehicle, TimeWindow } from '../optimization/routing-problem.ts';
import { stopWindow } from '../routes/route-optimize-plan.ts';
import type { OptimizeStop } from '../routes/route-optimize-snapshot.ts';

/** A driver the optimizer may use: where they are, how many more jobs fit, and today's hours (epoch ms). */
export type FleetDriver = { userId: string; position: LatLng | null; capacity: number | null; shift: { start: number; end: number } | null };

/** A job to place: its open stops in the order they must be served (pickups first). */
export type FleetJob = { jobId: string; stops: OptimizeStop[] };

/**
 * The multi-vehicle problem of a bulk distribution (DESIGN §8), on a clock of seconds after `departureMs`:
 * - matrix rows: the drivers' positions (those known), then every stop;
 * - one vehicle per driver, starting at their position (else at its first stop) with an open end, its capacity
 *   counted in jobs (each job weighs 1: the fleet's vehicle capacities are in items), its shift today's schedule;
 * - a job with one stop is a visit; with two or more, its first and last stops are a shipment (same driver,
 *   pickup first); stops between ride along after the pickup. Windows come from complete_after/complete_before.
 * Routing job ids: `v:<job id>` for a visit, `s:<job id>` for a shipment.
 */
export function fleetProblem(drivers: FleetDriver[], jobs: FleetJob[], departureMs: number): { problem: Omit<RoutingProblem, 'matrix'>; points: LatLng[] } {
  const points: LatLng[] = [];
  const startRow = new Map<string, number>();
  for (const driver of drivers) {
    if (!driver.position) continue;
    startRow.set(driver.userId, points.length);
    points.push(driver.position);
  }
  const stopRow = new Map<string, number>();
  for (const job of jobs) {
    for (const stop of job.stops) {
      stopRow.set(stop.id, points.length);
      points.push(stop.point);
    }
  }
  const routingStop = (stop: OptimizeStop, extraService = 0) => {
    const window = stopWindow(stop, departureMs);
    return { location: stopRow.get(stop.id)!, serviceSeconds: stop.serviceSeconds + extraService, timeWindows: window ? [window] : [] };
  };
  const routingJobs = jobs.map((job): RoutingJob => {
    const [first, ...rest] = job.stops;
    if (rest.length === 0) return { id: `v:${job.jobId}`, type: 'visit', stop: routingStop(first!), delivery: [1] };
    const between = rest.slice(0, -1).reduce((sum, s) => sum + s.serviceSeconds, 0);
    return { id: `s:${job.jobId}`, type: 'shipment', pickup: routingStop(first!, between), dropoff: routingStop(rest.at(-1)!), amount: [1] };
  });
  const vehicles = drivers.map(
    (driver): RoutingVehicle => ({
      id: driver.userId,
      capacity: [driver.capacity ?? Number.MAX_SAFE_INTEGER],
      shift: relativeShift(driver.shift, departureMs),
      ...(startRow.has(driver.userId) ? { startLocation: startRow.get(driver.userId)! } : {}),
    }),
  );
  return { problem: { vehicles, jobs: routingJobs, objective: 'duration' }, points };
}

export const withMatrix = (problem: Omit<RoutingProblem, 'matrix'>, matrix: DistanceMatrix): RoutingProblem => ({ ...problem, matrix });

/** A shift from now on: it cannot start before departure (the clock's 0). */
function relativeShift(shift: FleetDriver['shift'], departureMs: number): TimeWindow {
  if (!shift) return { start: 0, end: Infinity };
  const end = (shift.end - departureMs) / 1000;
  return { start: Math.max(0, Math.min(end, (shift.start - departureMs) / 1000)), end };
}

/**
 * A worker's hours on the local day of `at` (site zone): from the first slot's start to the last slot's end (an
 * exception for the date replaces the week; `off` is no hours). Null: no schedule, or no restriction that day (no
 * exception, `weekly: null`), any time; `{0,0}`: off today.
 */
export function shiftOn(schedule: WorkerScheduleData | null, timeZone: string, at: Date): { start: number; end: number } | null {
  if (!schedule) return null;
  const date = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
  const weekday = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short' }).format(at);
  const dayOfWeek = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(weekday);
  const slots = slotsOn(schedule, date, dayOfWeek);
  if (slots === null) return null;
  if (slots.length === 0) return { start: 0, end: 0 };
  const windows = slots.flatMap((s) => parseAccessWindow(`${s.start_time.slice(0, 5)}-${s.end_time.slice(0, 5)}`, at, timeZone, 'schedule', false));
  return { start: Math.min(...windows.map((w) => w.start)), end: Math.max(...windows.map((w) => w.end)) };
}

/** The stops of a planned routing job, in route order: a shipment's pickup brings the stops between with it. */
export function plannedStopIds(job: FleetJob, kind: 'visit' | 'pickup' | 'dropoff'): string[] {
  if (kind === 'visit') return job.stops.map((s) => s.id);
  return kind === 'pickup' ? job.stops.slice(0, -1).map((s) => s.id) : [job.stops.at(-1)!.id];
}
