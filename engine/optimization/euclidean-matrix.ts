import type { DistanceMatrix } from '../mapping/mapping-provider.ts';

export type PlanePoint = { x: number; y: number };

/**
 * A matrix from plane coordinates, for the public benchmarks (Solomon and Li & Lim: travel time = distance, not
 * rounded; TSPLIB EUC_2D: each edge rounded to the nearest integer). Real problems take the MappingProvider's
 * `matrix()` instead.
 */
export function euclideanMatrix(points: PlanePoint[], rounding: 'none' | 'nearest-integer' = 'none'): DistanceMatrix {
  const rows = points.map((from) =>
    points.map((to) => {
      const d = Math.hypot(from.x - to.x, from.y - to.y);
      return rounding === 'nearest-integer' ? Math.round(d) : d;
    }),
  );
  return { distances_meters: rows, durations_seconds: rows.map((row) => [...row]) };
}
