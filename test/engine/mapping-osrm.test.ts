import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../engine/domain-error.ts';
import { createMappingProvider } from '../../engine/mapping/create-mapping-provider.ts';
import type { LatLng } from '../../engine/mapping/mapping-provider.ts';
import { createOsrmProvider } from '../../engine/mapping/osrm-provider.ts';
import { startRecordedEngine, type RecordedEngine } from '../fixtures/mapping/recorded-engine.ts';

const CONCORDE: LatLng = { lat: 48.865611, lng: 2.321214 };
const RIVOLI: LatLng = { lat: 48.856612, lng: 2.352181 };
const BASTILLE: LatLng = { lat: 48.853312, lng: 2.369182 };

let engine: RecordedEngine;
beforeAll(async () => {
  engine = await startRecordedEngine({
    '/route/v1/': { fixture: 'osrm-route.json' },
    '/table/v1/': { fixture: 'osrm-table.json' },
    '/nearest/v1/': { fixture: 'osrm-nearest.json' },
  });
});
afterAll(() => engine.close());

/** The engine runs on loopback, which only tests may dial (WEBHOOK_ALLOW_LOOPBACK). */
const LOOPBACK = { allowLoopback: true, allowPrivateNetworks: false };
const osrm = (extra: Record<string, unknown> = {}) => createOsrmProvider({ base_url: `${engine.baseUrl}/`, timeout_ms: 1_000, ...extra }, LOOPBACK);
const lastRequest = () => engine.requests.at(-1)!;

async function failureOf(call: () => Promise<unknown>): Promise<DomainError> {
  try {
    await call();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError, got a result');
}

describe('OSRM adapter: recorded answers', () => {
  it('turns a route answer into legs with whole seconds, service times, ETAs and the decoded road shape', async () => {
    const departure = new Date('2026-11-21T08:00:00Z');
    const route = await osrm().route({
      waypoints: [CONCORDE, { ...RIVOLI, service_seconds: 300 }, BASTILLE],
      mode: 'van',
      departure_time: departure,
    });
    expect(lastRequest().pathname).toBe('/route/v1/driving/2.321214,48.865611;2.352181,48.856612;2.369182,48.853312');
    expect(lastRequest().searchParams.get('geometries')).toBe('polyline');
    expect(lastRequest().searchParams.get('overview')).toBe('full');
    expect(route.distance_meters).toBeCloseTo(3750.3, 1);
    expect(route.legs.map((l) => l.duration_seconds)).toEqual([302, 197]);
    expect(route.duration_seconds).toBe(499);
    expect(route.service_seconds).toBe(300);
    expect(route.legs[1]).toMatchObject({ from: 1, to: 2, cumulative_duration_seconds: 302 + 300 + 197, estimated_arrival_at: new Date('2026-11-21T08:13:19Z') });
    expect(route.geometry!.coordinates).toHaveLength(14);
    expect(route.geometry!.coordinates[0]).toEqual([2.32121, 48.86561]);
  });

  it('maps avoid features to exclude, alternatives between two points, and short mode to the shortest route', async () => {
    engine.answer('/route/v1/', { fixture: 'osrm-route-alternatives.json' });
    try {
      const fast = await osrm().route({ waypoints: [CONCORDE, BASTILLE], mode: 'car', alternatives: 1, avoid_features: ['toll', 'ferry'] });
      expect(lastRequest().searchParams.get('exclude')).toBe('toll,ferry');
      expect(lastRequest().searchParams.get('alternatives')).toBe('1');
      expect(fast.duration_seconds).toBe(512);
      expect(fast.alternatives?.map((a) => a.duration_seconds)).toEqual([541]);

      const short = await osrm().route({ waypoints: [CONCORDE, BASTILLE], mode: 'car', routing_mode: 'short' });
      expect(lastRequest().searchParams.get('alternatives')).toBe('2');
      expect(short.distance_meters).toBeCloseTo(3655.8, 1);
      expect(short.alternatives).toBeUndefined();
      expect(short.notes).toBeUndefined();
    } finally {
      engine.answer('/route/v1/', { fixture: 'osrm-route.json' });
    }
    // Through a waypoint OSRM has no alternatives to choose the shortest from: the answer says so.
    const through = await osrm().route({ waypoints: [CONCORDE, RIVOLI, BASTILLE], mode: 'car', routing_mode: 'short' });
    expect(lastRequest().searchParams.get('alternatives')).toBeNull();
    expect(through.notes).toEqual([expect.stringMatching(/routing_mode short applies between two points only/)]);
  });

  it('asks the table service once per distinct point and returns rows for origins, columns for destinations', async () => {
    const matrix = await osrm().matrix([CONCORDE, RIVOLI], [RIVOLI, BASTILLE], 'car');
    const request = lastRequest();
    expect(request.pathname).toBe('/table/v1/driving/2.321214,48.865611;2.352181,48.856612;2.369182,48.853312');
    expect(request.searchParams.get('sources')).toBe('0;1');
    expect(request.searchParams.get('destinations')).toBe('1;2');
    expect(request.searchParams.get('annotations')).toBe('duration,distance');
    expect(matrix.durations_seconds).toEqual([[302, 499], [0, 197]]);
    expect(matrix.distances_meters).toEqual([[2371.4, 3750.3], [0, 1378.9]]);
  });

  it('reports a pair with no road between them as 422 NO_ROUTE, not as a zero', async () => {
    engine.answer('/table/v1/', { fixture: 'osrm-table-unreachable.json' });
    try {
      const error = await failureOf(() => osrm().matrix([CONCORDE, RIVOLI], [CONCORDE, RIVOLI], 'car'));
      expect(error).toMatchObject({ status: 422, code: 'NO_ROUTE' });
    } finally {
      engine.answer('/table/v1/', { fixture: 'osrm-table.json' });
    }
  });

  it('snaps a point with the nearest service, using the profile configured for the mode', async () => {
    const nearest = await osrm({ profiles: { bike: 'bicycle' } }).nearest(RIVOLI, 'bike');
    expect(lastRequest().pathname).toBe('/nearest/v1/bicycle/2.352181,48.856612');
    expect(nearest).toEqual({ point: { lat: 48.856682, lng: 2.352093 }, distance_meters: 8.412, name: 'Rue de Rivoli' });
  });

  it('sends the api_key as a bearer token', async () => {
    const seen: (string | undefined)[] = [];
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'Ok', waypoints: [{ location: [2.35, 48.85], distance: 1, name: '' }] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      await createOsrmProvider({ base_url: `http://127.0.0.1:${port}`, api_key: 'k-123' }, LOOPBACK).nearest(RIVOLI, 'car');
      expect(seen).toEqual(['Bearer k-123']);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('has no geocoder: 422 GEOCODING_UNAVAILABLE without a network call', async () => {
    const before = engine.requests.length;
    expect(await failureOf(() => osrm().geocode('12 Rue de Rivoli'))).toMatchObject({ status: 422, code: 'GEOCODING_UNAVAILABLE' });
    expect(engine.requests.length).toBe(before);
  });

  it('checks input before calling the engine', async () => {
    const before = engine.requests.length;
    expect(await failureOf(() => osrm().route({ waypoints: [CONCORDE, { lat: 91, lng: 0 }], mode: 'car' }))).toMatchObject({ status: 400, field: 'waypoints.1.lat' });
    expect(engine.requests.length).toBe(before);
  });

  it('refuses a malformed config with 400 INVALID_MAPPING_CONFIG naming the key', async () => {
    for (const [config, field] of [
      [{ base_url: 'ftp://osrm.internal' }, 'base_url'],
      [{ base_url: 'http://osrm.internal', timeout_ms: 0 }, 'timeout_ms'],
      [{ base_url: 'http://osrm.internal', fallback: 'google' }, 'fallback'],
      [{ timeout_ms: 1000 }, 'config'],
    ] as const) {
      expect(await failureOf(async () => createOsrmProvider(config))).toMatchObject({ status: 400, code: 'INVALID_MAPPING_CONFIG', field });
    }
  });

  it('is what a site with an active osrm integration gets', async () => {
    const provider = createMappingProvider({ integration_key: 'osrm', config: { base_url: engine.baseUrl }, is_active: true }, LOOPBACK);
    expect(provider.name).toBe('osrm');
    expect((await provider.route({ waypoints: [CONCORDE, RIVOLI, BASTILLE], mode: 'car' })).distance_meters).toBeCloseTo(3750.3, 1);
  });
});
