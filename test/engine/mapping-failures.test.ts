import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../engine/domain-error.ts';
import { createMappingProvider } from '../../engine/mapping/create-mapping-provider.ts';
import { planRoute } from '../../engine/mapping/gis-route.ts';
import type { LatLng } from '../../engine/mapping/mapping-provider.ts';
import { createNominatimProvider } from '../../engine/mapping/nominatim-provider.ts';
import { createOfflineProvider } from '../../engine/mapping/offline-provider.ts';
import { createOsrmProvider } from '../../engine/mapping/osrm-provider.ts';
import { startRecordedEngine, type RecordedEngine, type Recording } from '../fixtures/mapping/recorded-engine.ts';

const CONCORDE: LatLng = { lat: 48.865611, lng: 2.321214 };
const BASTILLE: LatLng = { lat: 48.853312, lng: 2.369182 };
const TIMEOUT_MS = 300;
/**
 * Alone, the failure comes 1–6 ms after the timeout; the margin absorbs a shared machine under load (timers fire
 * late when the event loop is starved), while still telling a timeout from a hang.
 */
const MARGIN_MS = 500;

let engine: RecordedEngine;
beforeAll(async () => {
  engine = await startRecordedEngine({});
  // Node loads its fetch implementation on first use (a few hundred ms on a busy machine, blocking timers): pay it
  // here, so the timings below measure the timeout, not the module loader.
  await fetch(engine.baseUrl).then((r) => r.text());
});
afterAll(() => engine.close());

const LOOPBACK = { allowLoopback: true, allowPrivateNetworks: false };
const osrm = () => createOsrmProvider({ base_url: engine.baseUrl, timeout_ms: TIMEOUT_MS }, LOOPBACK);
const routeOnce = () => osrm().route({ waypoints: [CONCORDE, BASTILLE], mode: 'car' });

async function failureOf(call: () => Promise<unknown>): Promise<DomainError> {
  try {
    await call();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError, got a result');
}

async function timed<T>(call: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await call();
  return { result, ms: performance.now() - started };
}

describe('a failing engine gives 502 MAPPING_PROVIDER_ERROR with the reason, never a hang', () => {
  it.each<[string, Recording]>([
    ['never answers', { hang: true }],
    ['sends headers, then stalls the body', { stallBody: true }],
  ])('an engine that %s fails at the timeout', async (_, recording) => {
    engine.answer('/route/v1/', recording);
    const provider = osrm();
    const { result: error, ms } = await timed(() => failureOf(() => provider.route({ waypoints: [CONCORDE, BASTILLE], mode: 'car' })));
    expect(error).toMatchObject({ status: 502, code: 'MAPPING_PROVIDER_ERROR', details: { provider: 'osrm', reason: `no answer within ${TIMEOUT_MS} ms` } });
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(ms).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
  });

  it.each<[string, Recording, RegExp]>([
    ['NoRoute', { fixture: 'osrm-error-no-route.json', status: 400 }, /HTTP 400 NoRoute: Impossible route between points/],
    ['InvalidQuery', { fixture: 'osrm-error-invalid-query.json', status: 400 }, /HTTP 400 InvalidQuery: Query string malformed/],
    ['a proxy error page', { raw: '<html><body>502 Bad Gateway</body></html>', status: 502, contentType: 'text/html' }, /HTTP 502 with a body that is not JSON: <html>/],
    ['a JSON body of another shape', { raw: '{"code":"Ok","routes":[{"distance":"far"}]}' }, /unexpected answer at \/routes\/0/],
    ['an empty body', { raw: '' }, /not JSON: \(empty\)/],
    ['an error status with an unknown body', { raw: '{"status":"down"}', status: 503 }, /HTTP 503: \{"status":"down"\}/],
  ])('reports %s as the reason', async (_, recording, reason) => {
    engine.answer('/route/v1/', recording);
    const error = await failureOf(routeOnce);
    expect(error).toMatchObject({ status: 502, code: 'MAPPING_PROVIDER_ERROR' });
    expect(error.message).toMatch(reason);
  });

  it('reports a refused connection as unreachable', async () => {
    const closedPort = await freePort();
    const error = await failureOf(() => createOsrmProvider({ base_url: `http://127.0.0.1:${closedPort}` }, LOOPBACK).route({ waypoints: [CONCORDE, BASTILLE], mode: 'car' }));
    expect(error).toMatchObject({ status: 502, code: 'MAPPING_PROVIDER_ERROR' });
    expect(error.message).toMatch(/unreachable \(ECONNREFUSED\)/);
  });

  it('reports a Nominatim error body with its message', async () => {
    engine.answer('/search', { fixture: 'nominatim-error-bad-request.json', status: 400 });
    const error = await failureOf(() => createNominatimProvider({ base_url: engine.baseUrl }, LOOPBACK).geocode('Rivoli'));
    expect(error).toMatchObject({ status: 502, code: 'MAPPING_PROVIDER_ERROR', details: { provider: 'nominatim' } });
    expect(error.message).toMatch(/HTTP 400: Parameter 'lat' expected to be a number/);
  });
});

const withFallback = (fallback: 'offline' | 'none') =>
  createMappingProvider({ integration_key: 'osrm', config: { base_url: engine.baseUrl, timeout_ms: TIMEOUT_MS, fallback }, is_active: true }, LOOPBACK);

describe('fallback to the offline provider', () => {
  it('answers with the offline estimate, saying so and why, when the engine times out', async () => {
    engine.answer('/route/v1/', { hang: true });
    engine.answer('/table/v1/', { hang: true });
    const expected = await createOfflineProvider().route({ waypoints: [CONCORDE, BASTILLE], mode: 'car' });
    const { result: route, ms } = await timed(() => withFallback('offline').route({ waypoints: [CONCORDE, BASTILLE], mode: 'car' }));
    expect(route).toMatchObject({ distance_meters: expected.distance_meters, duration_seconds: expected.duration_seconds });
    expect(route.answered_by).toEqual({ provider: 'offline', fallback_reason: `mapping provider osrm failed: no answer within ${TIMEOUT_MS} ms` });
    expect(ms).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
    const matrix = await withFallback('offline').matrix([CONCORDE], [BASTILLE], 'car');
    expect(matrix.durations_seconds[0]![0]).toBe(expected.duration_seconds);
    expect(matrix.answered_by?.provider).toBe('offline');
  });

  it('uses the offline settings given under `offline`', async () => {
    engine.answer('/route/v1/', { fixture: 'osrm-error-no-route.json', status: 500 });
    const provider = createMappingProvider({
      integration_key: 'osrm',
      config: { base_url: engine.baseUrl, fallback: 'offline', offline: { profiles: { car: { speed_kmh: 36, detour_factor: 1 } } } },
      is_active: true,
    }, LOOPBACK);
    const route = await provider.route({ waypoints: [CONCORDE, BASTILLE], mode: 'car' });
    expect(route.duration_seconds).toBe(Math.round(route.distance_meters / 10));
  });

  it('fails with the 502 when no fallback is configured', async () => {
    engine.answer('/route/v1/', { fixture: 'osrm-error-no-route.json', status: 400 });
    expect(await failureOf(() => withFallback('none').route({ waypoints: [CONCORDE, BASTILLE], mode: 'car' }))).toMatchObject({ status: 502 });
  });

  it('does not hide input errors or rule errors behind the fallback', async () => {
    engine.answer('/table/v1/', { fixture: 'osrm-table-unreachable.json' });
    const provider = withFallback('offline');
    expect(await failureOf(() => provider.route({ waypoints: [CONCORDE], mode: 'car' }))).toMatchObject({ status: 400, code: 'TOO_FEW_WAYPOINTS' });
    expect(await failureOf(() => provider.matrix([CONCORDE, BASTILLE], [CONCORDE, BASTILLE], 'car'))).toMatchObject({ status: 422, code: 'NO_ROUTE' });
  });

  it('keeps the engine failure for geocoding, since the offline provider has no addresses to fall back on', async () => {
    engine.answer('/search', { hang: true });
    const provider = createMappingProvider({ integration_key: 'nominatim', config: { base_url: engine.baseUrl, timeout_ms: TIMEOUT_MS, fallback: 'offline' }, is_active: true }, LOOPBACK);
    expect(await failureOf(() => provider.geocode('12 Rue de Rivoli'))).toMatchObject({ status: 502, code: 'MAPPING_PROVIDER_ERROR' });
  });
});

/** A port nothing listens on: bind one, note it, release it. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const routeFailure = (policy?: { allowLoopback: boolean; allowPrivateNetworks: boolean }, base_url = engine.baseUrl) =>
  failureOf(() => createOsrmProvider({ base_url, timeout_ms: TIMEOUT_MS }, policy).route({ waypoints: [CONCORDE, BASTILLE], mode: 'car' }));

describe('where a site may point its engine', () => {

  it('refuses loopback, private and link-local addresses by default, without dialling them', async () => {
    engine.answer('/route/v1/', { fixture: 'osrm-route.json' });
    const before = engine.requests.length;
    expect((await routeFailure()).message).toMatch(/base_url host 127\.0\.0\.1 is a loopback address \(set MAPPING_ALLOW_PRIVATE_NETWORKS/);
    expect((await routeFailure(undefined, 'http://10.1.2.3:5000')).message).toMatch(/is a private network address/);
    expect((await routeFailure(undefined, 'http://169.254.169.254')).message).toMatch(/is a link-local address/);
    expect(engine.requests.length).toBe(before);
  });

  it('lets an operator allow private networks, link-local still refused', async () => {
    engine.answer('/route/v1/', { fixture: 'osrm-route.json' });
    const privateOk = { allowLoopback: false, allowPrivateNetworks: true };
    const answer = await createOsrmProvider({ base_url: engine.baseUrl }, privateOk).route({ waypoints: [CONCORDE, { lat: 48.8566, lng: 2.3522 }, BASTILLE], mode: 'car' });
    expect(answer.distance_meters).toBeCloseTo(3750.3, 1);
    expect((await routeFailure(privateOk, 'http://[fe80::1]:5000')).message).toMatch(/link-local/);
  });
});

describe('a route planned on the fallback', () => {
  it('names the provider that answered and why, and marks the geometry as an estimate', async () => {
    engine.answer('/route/v1/', { raw: 'upstream connect error', status: 503, contentType: 'text/plain' });
    const route = await planRoute(withFallback('offline'), {
      origin: CONCORDE,
      destination: BASTILLE,
      waypoints: [],
      mode: 'car',
      routingMode: 'fast',
      alternatives: 0,
      avoidFeatures: ['toll'],
      departure: new Date('2026-11-21T08:00:00Z'),
      optimize: false,
    });
    expect(route).toMatchObject({ provider: 'offline', geometryIsEstimate: true });
    expect(route.notes).toEqual([
      'answered by offline: mapping provider osrm failed: answered HTTP 503 with a body that is not JSON: upstream connect error',
      'avoid_features ignored by the offline estimate',
    ]);
  });
});
