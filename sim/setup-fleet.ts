import type { Plan } from './plan.ts';
import { SessionCredential, type SiteApi } from './site-api.ts';

/** A simulated driver's identity on the site: their user id and the API key their "app" uses. */
export type FleetMember = { name: string; userId: string; email: string; credential: SessionCredential };

export type SiteFleet = {
  teamId: string;
  members: FleetMember[];
  byUserId: Map<string, FleetMember>;
  /** Stop workflow state ids the drivers move through, by role in the visit. */
  stopStates: { enRoute: string; arrived: string; completed: string };
};

/** Simulated drivers share one password: they are test accounts on a site made for the run (or a demo site). */
const DRIVER_PASSWORD = 'simulated-driver-1';

type WorkflowBody = { states: { id: string; key: string; phase: string }[] };

/** A driver to sign in: their user id, email and (live) password. */
export type DriverLogin = { userId: string; email: string; password: string | undefined };

/** How the drivers' apps get their sessions, in driver order: REST sign-in with the password (live), or issued in process. */
export type SignInDrivers = (api: SiteApi, drivers: DriverLogin[]) => Promise<SessionCredential[]>;

const passwordSignIn: SignInDrivers = (api, drivers) => Promise.all(drivers.map((driver) => SessionCredential.signIn(api, driver.email, driver.password!)));

/**
 * Creates the fleet through the REST API as an office would: one team, and per driver a vehicle and a worker (a new
 * driver user with that vehicle and team), then signs the drivers in as their apps would. Each kind of call is made
 * one at a time in driver order, so ids (sortable ULIDs) follow driver names and tie rules by id break the same way
 * in every run; the next driver's vehicle is created while this driver's worker is, so setup waits on one round
 * trip at a time less.
 *
 * With `signIn` (in process), drivers get no password and their sessions are issued directly, all at once, sparing
 * a password hash and a transaction per driver per run; without it (live), they get a password and sign in over REST
 * like any app.
 */
export async function setUpFleet(api: SiteApi, plan: Plan, runLabel: string, signIn: SignInDrivers | null = null): Promise<SiteFleet> {
  const workflow = await api.call<WorkflowBody>('GET', '/api/workflow?entity_type=stop');
  const team = await api.call<{ id: string }>('POST', '/api/team', { name: `sim ${runLabel}`, description: `simulated fleet of ${plan.scenario.name}` });
  // Where the drivers serve: the zone-based strategy picks drivers of a zone around the pickup.
  const zone = await api.call<{ id: string }>('POST', '/api/zone', { name: `sim ${runLabel} area`, kind: 'service', geometry: serviceArea(plan) });
  const vehicleOf = (index: number) => settled(api.call<{ id: string }>('POST', '/api/vehicle', { name: `${runLabel} ${plan.drivers[index]!.name}`, type: plan.scenario.fleet.vehicle }));
  const logins: DriverLogin[] = [];
  let nextVehicle = vehicleOf(0);
  for (const [index, driver] of plan.drivers.entries()) {
    const vehicle = await nextVehicle;
    if (index + 1 < plan.drivers.length) nextVehicle = vehicleOf(index + 1);
    const email = `${runLabel}-${driver.name}@sim.example`;
    const password = signIn ? undefined : DRIVER_PASSWORD;
    const worker = await api.call<{ id: string }>('POST', '/api/worker', {
      email,
      ...(password ? { password } : {}),
      first_name: driver.name,
      last_name: 'Sim',
      default_vehicle_id: vehicle.id,
      team_ids: [team.id],
      zone_ids: [zone.id],
      ...maxLoad(plan),
    });
    logins.push({ userId: worker.id, email, password });
  }
  const sessions = await (signIn ?? passwordSignIn)(api, logins);
  const members = plan.drivers.map((driver, i) => ({ name: driver.name, userId: logins[i]!.userId, email: logins[i]!.email, credential: sessions[i]! }));
  return { teamId: team.id, members, byUserId: new Map(members.map((m) => [m.userId, m])), stopStates: stopStatesOf(workflow) };
}

/**
 * The drivers' service zone as a GeoJSON polygon: the box around the scenario's area and every reachable job's
 * pickup (hotspots may spill over the area's edge; a job left out would find no driver of its zone and wait
 * forever). Jobs the plan marks impossible stay out of it if they lie outside.
 */
function serviceArea(plan: Plan): { type: 'Polygon'; coordinates: [number, number][][] } {
  const area = plan.scenario.area;
  const corners: [number, number][] = 'bbox' in area ? [[area.bbox[0], area.bbox[1]], [area.bbox[2], area.bbox[3]]] : area.polygon;
  const points = [...corners, ...plan.jobs.filter((job) => !job.impossible).map((job): [number, number] => [job.pickup.lng, job.pickup.lat])];
  const margin = 1e-4;
  const [minLng, maxLng] = [Math.min(...points.map((p) => p[0])) - margin, Math.max(...points.map((p) => p[0])) + margin];
  const [minLat, maxLat] = [Math.min(...points.map((p) => p[1])) - margin, Math.max(...points.map((p) => p[1])) + margin];
  return { type: 'Polygon', coordinates: [[[minLng, minLat], [maxLng, minLat], [maxLng, maxLat], [minLng, maxLat], [minLng, minLat]]] };
}

/** A call started ahead of the one awaited now: if it fails first, its error waits for its own `await` (no unhandled rejection). */
function settled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

function maxLoad(plan: Plan): { max_load?: number } {
  const load = plan.scenario.fleet.max_load;
  return load === undefined ? {} : { max_load: load };
}

/** Finds the visit's states by key in the default workflow, else by phase (a site may rename them). */
function stopStatesOf(workflow: WorkflowBody): SiteFleet['stopStates'] {
  const byKey = (key: string) => workflow.states.find((s) => s.key === key);
  const inProgress = workflow.states.filter((s) => s.phase === 'in_progress');
  const enRoute = byKey('en_route') ?? inProgress[0];
  const arrived = byKey('arrived') ?? inProgress.at(-1);
  const completed = byKey('completed') ?? workflow.states.find((s) => s.phase === 'completed');
  if (!enRoute || !arrived || !completed) throw new Error('the site stop workflow has no in-progress or completed state for drivers to move through');
  return { enRoute: enRoute.id, arrived: arrived.id, completed: completed.id };
}
