import type { RoutingModel } from './routing-model.ts';
import { earliestStart, latestArrival } from './time-windows.ts';

/**
 * One vehicle's route with what insertion checks need in O(1) per position (position 0 is the start depot,
 * `size + 1` the end depot, job nodes in between):
 * - `start[k]`: earliest service start at position k (forward pass);
 * - `latest[k]`: latest arrival at k that keeps the rest of the route inside its windows (backward pass);
 * - `load[k]`: on board when leaving k; `prefixMax`/`suffixMax`: the largest load up to / from k.
 * Refreshed after every change (O(length)); cloned on write so the search can drop a rejected candidate.
 */
export class RouteState {
  nodes: number[];
  // Plain arrays, not typed ones: a route is copied on every move that touches it, and small typed arrays are
  // several times slower to allocate.
  start: number[] = [];
  latest: number[] = [];
  load: number[] = [];
  prefixMax: number[] = [];
  suffixMax: number[] = [];
  feasible = true;
  distance = 0;
  /** Arrival at the end minus departure. */
  duration = 0;
  /** The objective's part for this route, vehicle fixed cost excluded. */
  cost = 0;

  constructor(
    readonly vehicle: number,
    nodes: number[] = [],
  ) {
    this.nodes = nodes;
  }

  get size(): number {
    return this.nodes.length;
  }

  /** The node at a position, depots included. */
  nodeAt(model: RoutingModel, position: number): number {
    if (position === 0) return model.vehicleStart[this.vehicle]!;
    if (position > this.nodes.length) return model.vehicleEnd[this.vehicle]!;
    return this.nodes[position - 1]!;
  }

  clone(): RouteState {
    const copy = new RouteState(this.vehicle, this.nodes.slice());
    copy.start = this.start.slice();
    copy.latest = this.latest.slice();
    copy.load = this.load.slice();
    copy.prefixMax = this.prefixMax.slice();
    copy.suffixMax = this.suffixMax.slice();
    copy.feasible = this.feasible;
    copy.distance = this.distance;
    copy.duration = this.duration;
    copy.cost = this.cost;
    return copy;
  }

  refresh(model: RoutingModel, objective: 'distance' | 'duration'): void {
    const positions = this.nodes.length + 2;
    const { dims, location, service, duration, distance, locationCount: n } = model;
    let feasible = true;
    let travelled = 0;
    const nodes = this.nodes;
    const start = this.start;
    const endNode = model.vehicleEnd[this.vehicle]!;
    start.length = positions;
    this.latest.length = positions;
    let previous = model.vehicleStart[this.vehicle]!;
    let time = earliestStart(model, previous, -Infinity);
    start[0] = time;
    for (let k = 1; k < positions; k++) {
      const node = k < positions - 1 ? nodes[k - 1]! : endNode;
      const arc = location[previous]! * n + location[node]!;
      travelled += distance[arc]!;
      time = earliestStart(model, node, time + service[previous]! + duration[arc]!);
      start[k] = time;
      previous = node;
    }
    if (time === Infinity) feasible = false;
    this.latest[positions - 1] = latestArrival(model, endNode, Infinity);
    let next = endNode;
    for (let k = positions - 2; k >= 0; k--) {
      const node = k > 0 ? nodes[k - 1]! : model.vehicleStart[this.vehicle]!;
      const latestStart = this.latest[k + 1]! - duration[location[node]! * n + location[next]!]! - service[node]!;
      this.latest[k] = latestArrival(model, node, latestStart);
      next = node;
    }
    if (dims > 0) feasible = this.refreshLoads(model, positions) && feasible;
    this.feasible = feasible && this.start[positions - 1]! <= this.latest[positions - 1]!;
    this.distance = travelled;
    // The route leaves at its first service start; an open start has no travel before the first stop.
    const departure = this.nodes.length > 0 ? this.start[0]! : 0;
    this.duration = this.nodes.length > 0 ? this.start[positions - 1]! - departure : 0;
    this.cost = this.nodes.length === 0 ? 0 : objective === 'duration' ? this.duration : this.distance;
  }

  private refreshLoads(model: RoutingModel, positions: number): boolean {
    const { dims, demand, startLoad } = model;
    this.load.length = this.prefixMax.length = this.suffixMax.length = positions * dims;
    const capacity = model.capacity;
    let feasible = true;
    for (let d = 0; d < dims; d++) {
      let initial = 0;
      for (const node of this.nodes) initial += startLoad[node * dims + d]!;
      this.load[d] = initial;
      for (let k = 1; k < positions; k++) {
        const node = this.nodeAt(model, k);
        const change = k === positions - 1 ? 0 : demand[node * dims + d]!;
        this.load[k * dims + d] = this.load[(k - 1) * dims + d]! + change;
      }
      let running = -Infinity;
      for (let k = 0; k < positions; k++) {
        running = Math.max(running, this.load[k * dims + d]!);
        this.prefixMax[k * dims + d] = running;
      }
      running = -Infinity;
      for (let k = positions - 1; k >= 0; k--) {
        running = Math.max(running, this.load[k * dims + d]!);
        this.suffixMax[k * dims + d] = running;
      }
      if (running > capacity[this.vehicle * dims + d]! + 1e-9) feasible = false;
    }
    return feasible;
  }
}
