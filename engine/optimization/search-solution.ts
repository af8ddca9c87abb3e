import { RouteState } from './route-state.ts';
import type { RoutingModel } from './routing-model.ts';

/**
 * A candidate answer during the search: one route per vehicle (empty ones included) and the jobs not placed.
 * `derive()` shares the routes with its parent and copies a route only when it is about to change (`own`), so
 * trying and rejecting a move costs what the move touched, not the whole solution.
 */
export class SearchSolution {
  private owned: boolean[];

  constructor(
    readonly routes: RouteState[],
    public unassigned: number[],
    /** Node → vehicle whose route holds it, or -1. */
    readonly routeOf: Int32Array,
  ) {
    this.owned = routes.map(() => true);
  }

  static empty(model: RoutingModel, objective: 'distance' | 'duration'): SearchSolution {
    const routes = Array.from({ length: model.vehicleCount }, (_, v) => new RouteState(v));
    for (const route of routes) route.refresh(model, objective);
    const jobs = Array.from({ length: model.jobFirstNode.length }, (_, j) => j);
    return new SearchSolution(routes, jobs, new Int32Array(model.nodeCount).fill(-1));
  }

  derive(): SearchSolution {
    const child = new SearchSolution(this.routes.slice(), this.unassigned.slice(), this.routeOf.slice());
    child.owned = this.routes.map(() => false);
    return child;
  }

  /** The route of vehicle v, copied first if it is still shared with the parent. */
  own(v: number): RouteState {
    if (!this.owned[v]) {
      this.routes[v] = this.routes[v]!.clone();
      this.owned[v] = true;
    }
    return this.routes[v]!;
  }

  ownedRoutes(): number[] {
    const list: number[] = [];
    this.owned.forEach((owned, v) => owned && list.push(v));
    return list;
  }

  /** The objective with its penalties: Infinity when a route breaks a constraint. */
  cost(model: RoutingModel): number {
    let total = this.unassigned.length * model.unassignedPenalty;
    for (const route of this.routes) {
      // An unused vehicle drives nowhere, even if its shift could not fit the trip from its start to its end.
      if (route.size === 0) continue;
      if (!route.feasible) return Infinity;
      total += route.cost + model.vehicleFixedCost;
    }
    return total;
  }

  vehiclesUsed(): number {
    return this.routes.reduce((count, route) => count + (route.size > 0 ? 1 : 0), 0);
  }
}
