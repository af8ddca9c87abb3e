import { noChoice, tryShipment, tryVisit } from './insertion.ts';
import { RouteState } from './route-state.ts';
import type { RoutingModel } from './routing-model.ts';
import type { PlannedRoute, PlannedStop, RoutingProblem, RoutingSolution, UnassignedJob } from './routing-problem.ts';
import type { SearchSolution } from './search-solution.ts';
import { createSeededRandom } from './seeded-random.ts';

type Shaped = Omit<RoutingSolution, 'iterations' | 'seed' | 'elapsedMs'>;

/** The search's internal routes as the caller's data: stops with times and loads, totals, and why jobs are left out. */
export function toRoutingSolution(problem: RoutingProblem, model: RoutingModel, solution: SearchSolution, objective: 'distance' | 'duration'): Shaped {
  const routes = solution.routes.filter((route) => route.size > 0).map((route) => toPlannedRoute(problem, model, route));
  const unassigned = solution.unassigned
    .slice()
    .sort((a, b) => a - b)
    .map((job) => explainUnassigned(problem, model, job, objective));
  const distance = routes.reduce((sum, r) => sum + r.distance, 0);
  const duration = routes.reduce((sum, r) => sum + r.duration, 0);
  return { routes, unassigned, vehiclesUsed: routes.length, distance, duration, cost: objective === 'duration' ? duration : distance };
}

function toPlannedRoute(problem: RoutingProblem, model: RoutingModel, route: RouteState): PlannedRoute {
  const { dims, location, service, duration, locationCount: n } = model;
  const stops: PlannedStop[] = route.nodes.map((node, i) => {
    const k = i + 1;
    const previous = route.nodeAt(model, k - 1);
    const arrival = route.start[k - 1]! + service[previous]! + duration[location[previous]! * n + location[node]!]!;
    const kind = model.role[node] === 0 ? 'visit' : model.role[node] === 1 ? 'pickup' : 'dropoff';
    return {
      jobId: problem.jobs[model.jobOfNode[node]!]!.id,
      kind,
      location: location[node]!,
      arrival,
      serviceStart: route.start[k]!,
      departure: route.start[k]! + service[node]!,
      load: Array.from({ length: dims }, (_, d) => route.load[k * dims + d]!),
    };
  });
  const vehicle = problem.vehicles[model.vehicleKind[route.vehicle]!]!;
  const departure = route.start[0]!;
  const arrival = route.start[route.size + 1]!;
  return {
    vehicleId: vehicle.id,
    vehicleIndex: model.vehicleOrdinal[route.vehicle]!,
    stops,
    departure,
    arrival,
    distance: route.distance,
    duration: arrival - departure,
  };
}

/** Tries the job alone on an empty vehicle of each kind: too big, unreachable in time, or just no room left. */
function explainUnassigned(problem: RoutingProblem, model: RoutingModel, job: number, objective: 'distance' | 'duration'): UnassignedJob {
  const jobId = problem.jobs[job]!.id;
  const node = model.jobFirstNode[job]!;
  const random = createSeededRandom(0);
  let fitsSomeCapacity = false;
  let fitsAlone = false;
  const triedKinds = new Set<number>();
  for (let v = 0; v < model.vehicleCount; v++) {
    const kind = model.vehicleKind[v]!;
    if (triedKinds.has(kind)) continue;
    triedKinds.add(kind);
    if (!amountFits(model, node, v)) continue;
    fitsSomeCapacity = true;
    const empty = new RouteState(v);
    empty.refresh(model, objective);
    const best = noChoice();
    if (model.role[node] === 1) tryShipment(model, empty, node, 0, random, best);
    else tryVisit(model, empty, node, 0, random, best);
    if (best.vehicle !== -1) fitsAlone = true;
  }
  if (model.vehicleCount === 0) return { jobId, reason: 'fleet_exhausted', detail: 'there is no vehicle' };
  if (!fitsSomeCapacity) return { jobId, reason: 'capacity', detail: 'larger than the capacity of every vehicle' };
  if (!fitsAlone) {
    return { jobId, reason: 'time_window', detail: 'no vehicle can serve it inside its time windows and shift, even with nothing else to do' };
  }
  return { jobId, reason: 'fleet_exhausted', detail: 'fits a vehicle on its own, but no route has room or time left for it' };
}

function amountFits(model: RoutingModel, node: number, vehicle: number): boolean {
  const { dims, demand, startLoad, capacity } = model;
  for (let d = 0; d < dims; d++) {
    const limit = capacity[vehicle * dims + d]! + 1e-9;
    const delivery = startLoad[node * dims + d]!;
    if (delivery > limit || demand[node * dims + d]! + delivery > limit) return false;
  }
  return true;
}
