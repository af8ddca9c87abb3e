import { describe, expect, it } from 'vitest';
import { euclideanMatrix } from '../../../engine/optimization/euclidean-matrix.ts';
import { sequenceWaypoints } from '../../../engine/optimization/sequence-waypoints.ts';

const departure = new Date('2026-05-04T08:00:00Z');
const at = (secondsAfterDeparture: number) => new Date(departure.getTime() + secondsAfterDeparture * 1000);

/** Start at x=0, waypoints at the given x, end back at x=0 (if any): travel = distance (1 m per second). */
function onALine(xs: number[], withEnd = true) {
  return euclideanMatrix([{ x: 0, y: 0 }, ...xs.map((x) => ({ x, y: 0 })), ...(withEnd ? [{ x: 0, y: 0 }] : [])]);
}

describe('sequenceWaypoints', () => {
  it('orders waypoints given out of order along the shortest tour, with times on the clock', () => {
    const result = sequenceWaypoints({
      matrix: onALine([30, 10, 20]),
      waypoints: [{ id: 'c', service_time: 5 }, { id: 'a', service_time: 5 }, { id: 'b', service_time: 5 }],
      has_end: true,
      departure_time: departure,
      optimize_for: 'distance',
      time_budget_ms: 200,
    });
    expect([['a', 'b', 'c'], ['c', 'b', 'a']]).toContainEqual(result.order);
    expect(result.distance_meters).toBe(60);
    expect(result.duration_seconds).toBe(75);
    expect(result.arrival_at).toEqual(at(75));
    expect(result.infeasible).toEqual([]);
  });

  it('follows access windows (several per waypoint), waiting when early', () => {
    const result = sequenceWaypoints({
      matrix: onALine([10, 20]),
      waypoints: [
        { id: 'near', access_windows: [{ from: at(0), to: at(5) }, { from: at(100), to: at(200) }] },
        { id: 'far', access_windows: [{ from: at(0), to: at(50) }] },
      ],
      has_end: true,
      departure_time: departure,
      optimize_for: 'distance',
      time_budget_ms: 200,
    });
    expect(result.order).toEqual(['far', 'near']);
    expect(result.stops[1]).toEqual({ id: 'near', arrival_at: at(30), service_start_at: at(100), departure_at: at(100) });
  });

  it('reports a waypoint whose windows cannot be met instead of dropping it', () => {
    const result = sequenceWaypoints({
      matrix: onALine([10, 500], false),
      waypoints: [{ id: 'ok' }, { id: 'unreachable', access_windows: [{ from: at(0), to: at(100) }] }],
      has_end: false,
      departure_time: departure,
      optimize_for: 'time',
      time_budget_ms: 200,
    });
    expect(result.order).toEqual(['ok']);
    expect(result.infeasible).toEqual([{ id: 'unreachable', reason: 'time_window', detail: expect.any(String) }]);
  });

  it('optimize_for picks the fastest or the shortest order when they differ', () => {
    // Start 0, waypoints 1 and 2, end 3. Going 0→2 is longer but on a fast road.
    const distances = [
      [0, 10, 30, 0],
      [10, 0, 10, 10],
      [30, 10, 0, 10],
      [0, 10, 10, 0],
    ];
    const durations = [
      [0, 50, 5, 0],
      [50, 0, 10, 50],
      [5, 10, 0, 50],
      [0, 10, 10, 0],
    ];
    const input = { matrix: { distances_meters: distances, durations_seconds: durations }, waypoints: [{ id: 'one' }, { id: 'two' }], has_end: true, departure_time: departure, time_budget_ms: 200 };
    expect(sequenceWaypoints({ ...input, optimize_for: 'distance' }).order).toEqual(['one', 'two']);
    const fastest = sequenceWaypoints({ ...input, optimize_for: 'time' });
    expect(fastest.order).toEqual(['two', 'one']);
    expect(fastest.duration_seconds).toBe(65);
  });
});
