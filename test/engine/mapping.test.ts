import { describe, expect, it } from 'vitest';
import type { LatLng, RouteWaypoint, TransportMode } from '../../engine/mapping/mapping-provider.ts';
import { createOfflineProvider } from '../../engine/mapping/offline-provider.ts';

const PARIS: LatLng = { lat: 48.8566, lng: 2.3522 };
const LONDON: LatLng = { lat: 51.5074, lng: -0.1278 };
/** Turf's mean Earth radius: a meridian arc of Δφ radians is exactly R·Δφ, an independent check on the distance. */
const EARTH_RADIUS_M = 6_371_008.8;
const meridianMeters = (degrees: number) => EARTH_RADIUS_M * degrees * (Math.PI / 180);

/** A provider whose car drives straight lines at 10 m/s, so expected values are easy to state. */
const straightCar = () => createOfflineProvider({ profiles: { car: { detour_factor: 1, speed_kmh: 36 } } });
const trip = (from: LatLng, to: LatLng, mode: TransportMode = 'car') => ({ waypoints: [from, to], mode });
const north = (from: LatLng, degrees: number): LatLng => ({ lat: from.lat + degrees, lng: from.lng });
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe('offline provider: distances', () => {
  it('measures Paris to London as the 343.5 km great circle when the detour factor is 1', async () => {
    const route = await straightCar().route(trip(PARIS, LONDON));
    expect(route.distance_meters / 1000).toBeGreaterThan(343.5 * 0.99);
    expect(route.distance_meters / 1000).toBeLessThan(343.5 * 1.01);
  });

  it('applies the default road-detour factor per mode: 1.3 by car, 1.2 by bike and on foot', async () => {
    const provider = createOfflineProvider();
    const straight = (await straightCar().route(trip(PARIS, LONDON))).distance_meters;
    const byMode = async (mode: TransportMode) => (await provider.route(trip(PARIS, LONDON, mode))).distance_meters;
    expect(await byMode('car')).toBeCloseTo(straight * 1.3, 3);
    expect(await byMode('bike')).toBeCloseTo(straight * 1.2, 3);
    expect(await byMode('on_foot')).toBeCloseTo(straight * 1.2, 3);
  });

  it('gives zero distance and zero time between identical points', async () => {
    const route = await createOfflineProvider().route(trip(PARIS, PARIS));
    expect(route).toMatchObject({ distance_meters: 0, duration_seconds: 0 });
    const matrix = await createOfflineProvider().matrix([PARIS], [PARIS], 'truck');
    expect(matrix).toEqual({ distances_meters: [[0]], durations_seconds: [[0]] });
  });

  it('answers the same numbers on every call', async () => {
    const points = [PARIS, LONDON, north(PARIS, 0.05)];
    const first = await createOfflineProvider().matrix(points, points, 'van');
    expect(await createOfflineProvider().matrix(points, points, 'van')).toEqual(first);
  });
});

describe('offline provider: durations', () => {
  it('derives whole-second travel time from the distance and the speed profile', async () => {
    const route = await straightCar().route(trip(PARIS, north(PARIS, 0.1)));
    expect(route.distance_meters).toBeCloseTo(meridianMeters(0.1), 3);
    expect(route.duration_seconds).toBe(Math.round(meridianMeters(0.1) / 10));
    expect(Number.isInteger(route.duration_seconds)).toBe(true);
  });

  it('is slower on foot than by bike, and by bike than by car, over the same trip', async () => {
    const provider = createOfflineProvider();
    const seconds = async (mode: TransportMode) => (await provider.route(trip(PARIS, north(PARIS, 0.1), mode))).duration_seconds;
    const [car, bike, onFoot] = [await seconds('car'), await seconds('bike'), await seconds('on_foot')];
    expect(onFoot).toBeGreaterThan(bike);
    expect(bike).toBeGreaterThan(car);
    // 11.12 km × 1.2 at 5 km/h is about 2 h 40 min.
    expect(onFoot).toBe(Math.round((meridianMeters(0.1) * 1.2) / (5 / 3.6)));
  });

  it('uses a site-configured speed for one mode and keeps the defaults for the others', async () => {
    const provider = createOfflineProvider({ profiles: { bike: { speed_kmh: 30 } } });
    const defaults = createOfflineProvider();
    const bike = (await provider.route(trip(PARIS, north(PARIS, 0.1), 'bike'))).duration_seconds;
    expect(bike).toBeCloseTo((await defaults.route(trip(PARIS, north(PARIS, 0.1), 'bike'))).duration_seconds / 2, -1);
    expect(await provider.route(trip(PARIS, LONDON))).toEqual(await defaults.route(trip(PARIS, LONDON)));
  });
});

describe('offline provider: matrix', () => {
  it('has one row per origin and one column per destination, each cell matching the one-leg route', async () => {
    const provider = createOfflineProvider();
    const origins = [PARIS, LONDON, north(PARIS, 1)];
    const destinations = [north(LONDON, 0.2), PARIS];
    const matrix = await provider.matrix(origins, destinations, 'scooter');
    expect(matrix.distances_meters).toHaveLength(3);
    expect(matrix.durations_seconds).toHaveLength(3);
    for (const row of [...matrix.distances_meters, ...matrix.durations_seconds]) expect(row).toHaveLength(2);
    const route = await provider.route(trip(origins[2]!, destinations[0]!, 'scooter'));
    expect(matrix.distances_meters[2]![0]).toBe(route.distance_meters);
    expect(matrix.durations_seconds[2]![0]).toBe(route.duration_seconds);
  });

  it('is exactly symmetric with a zero diagonal for the same points both ways', async () => {
    // The last two are a pair whose haversine differs in the last bit when the arguments are swapped.
    const points = [PARIS, LONDON, north(PARIS, 0.01), { lat: -12.2231, lng: 95.8785 }, { lat: 1.6701, lng: -47.8234 }];
    const { distances_meters: d, durations_seconds: t } = await createOfflineProvider().matrix(points, points, 'car');
    points.forEach((_, i) => {
      expect(d[i]![i]).toBe(0);
      points.forEach((__, j) => {
        expect(d[i]![j]).toBe(d[j]![i]);
        expect(t[i]![j]).toBe(t[j]![i]);
      });
    });
  });

  it('returns no rows for no origins', async () => {
    expect(await createOfflineProvider().matrix([], [PARIS], 'car')).toEqual({ distances_meters: [], durations_seconds: [] });
  });

  it('refuses a matrix over the configured cell limit with 422 MATRIX_TOO_LARGE', async () => {
    const provider = createOfflineProvider({ max_matrix_cells: 4 });
    await expect(provider.matrix([PARIS, LONDON], [PARIS, LONDON], 'car')).resolves.toBeDefined();
    await expect(provider.matrix([PARIS, LONDON, PARIS], [PARIS, LONDON], 'car')).rejects.toMatchObject({
      status: 422,
      code: 'MATRIX_TOO_LARGE',
    });
  });
});

describe('offline provider: ETAs along a route', () => {
  const departure = new Date('2026-03-02T08:00:00Z');
  const stops: RouteWaypoint[] = [
    { ...PARIS, id: 'depot', service_seconds: 600 },
    { ...north(PARIS, 0.02), id: 'pickup', service_seconds: 300 },
    { ...north(PARIS, 0.02), id: 'same-building', service_seconds: 120 },
    { ...north(PARIS, 0.05), id: 'dropoff', service_seconds: 180 },
  ];

  it('orders arrivals and completions in time, each stop served before the next leg starts', async () => {
    const route = await createOfflineProvider().route({ waypoints: stops, mode: 'van', departure_time: departure });
    expect(route.legs.map((leg) => [leg.from, leg.to])).toEqual([[0, 1], [1, 2], [2, 3]]);
    let previousCompletion = departure.getTime() + 600_000;
    for (const leg of route.legs) {
      const arrival = leg.estimated_arrival_at!.getTime();
      expect(arrival).toBe(previousCompletion + leg.duration_seconds * 1000);
      expect(arrival).toBe(departure.getTime() + leg.cumulative_duration_seconds * 1000);
      expect(leg.estimated_completion_at!.getTime()).toBe(arrival + stops[leg.to]!.service_seconds! * 1000);
      previousCompletion = leg.estimated_completion_at!.getTime();
    }
    const cumulative = route.legs.map((leg) => leg.cumulative_duration_seconds);
    expect(cumulative).toEqual([...cumulative].sort((a, b) => a - b));
  });

  it('totals travel and service separately, and sums the legs', async () => {
    const route = await createOfflineProvider().route({ waypoints: stops, mode: 'van' });
    expect(route.service_seconds).toBe(1200);
    expect(route.duration_seconds).toBe(sum(route.legs.map((leg) => leg.duration_seconds)));
    expect(route.distance_meters).toBeCloseTo(sum(route.legs.map((leg) => leg.distance_meters)), 6);
    expect(route.legs.at(-1)!.cumulative_distance_meters).toBe(route.distance_meters);
    expect(route.legs[1]).toMatchObject({ distance_meters: 0, duration_seconds: 0 });
    // Without a departure time there is no clock to place the stops on.
    expect(route.legs[0]!.estimated_arrival_at).toBeUndefined();
    expect(route.geometry).toBeUndefined();
  });
});
