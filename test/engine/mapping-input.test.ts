import { describe, expect, it } from 'vitest';
import { DomainError } from '../../engine/domain-error.ts';
import { createMappingProvider } from '../../engine/mapping/create-mapping-provider.ts';
import { transportModeFor, type LatLng, type TransportMode } from '../../engine/mapping/mapping-provider.ts';
import { createOfflineProvider } from '../../engine/mapping/offline-provider.ts';

const PARIS: LatLng = { lat: 48.8566, lng: 2.3522 };
const LONDON: LatLng = { lat: 51.5074, lng: -0.1278 };
const provider = createOfflineProvider();

/** The DomainError a call throws, synchronously or not; anything else fails the test. */
async function failureOf(call: () => unknown): Promise<DomainError> {
  try {
    await call();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError, got a result');
}

describe('geocoding offline', () => {
  it('answers geocode with 422 GEOCODING_UNAVAILABLE', async () => {
    expect(await failureOf(() => provider.geocode('12 Rue de Rivoli, Paris'))).toMatchObject({
      status: 422,
      code: 'GEOCODING_UNAVAILABLE',
    });
  });

  it('answers reverse geocode with 422 GEOCODING_UNAVAILABLE, after checking the point', async () => {
    expect(await failureOf(() => provider.reverseGeocode(PARIS))).toMatchObject({ status: 422, code: 'GEOCODING_UNAVAILABLE' });
    expect(await failureOf(() => provider.reverseGeocode({ lat: 95, lng: 0 }))).toMatchObject({
      status: 400,
      code: 'INVALID_COORDINATES',
      field: 'point.lat',
    });
  });
});

describe('input validation', () => {
  it.each([
    [{ lat: 90.0001, lng: 0 }, 'waypoints.1.lat'],
    [{ lat: -91, lng: 0 }, 'waypoints.1.lat'],
    [{ lat: Number.NaN, lng: 0 }, 'waypoints.1.lat'],
    [{ lat: 0, lng: 180.5 }, 'waypoints.1.lng'],
    [{ lat: 0, lng: -Infinity }, 'waypoints.1.lng'],
  ])('refuses %o in a route with 400 INVALID_COORDINATES on %s', async (point, field) => {
    const error = await failureOf(() => provider.route({ waypoints: [PARIS, point], mode: 'car' }));
    expect(error).toMatchObject({ status: 400, code: 'INVALID_COORDINATES', field });
  });

  it('accepts the extreme valid coordinates', async () => {
    const route = await provider.route({ waypoints: [{ lat: 90, lng: 180 }, { lat: -90, lng: -180 }], mode: 'car' });
    expect(route.distance_meters).toBeGreaterThan(0);
  });

  it('names the bad point of a matrix by side and index', async () => {
    const error = await failureOf(() => provider.matrix([PARIS], [LONDON, { lat: 0, lng: 200 }], 'car'));
    expect(error).toMatchObject({ status: 400, code: 'INVALID_COORDINATES', field: 'destinations.1.lng' });
  });

  it('refuses an unknown transport mode', async () => {
    const mode = 'hovercraft' as TransportMode;
    expect(await failureOf(() => provider.matrix([PARIS], [LONDON], mode))).toMatchObject({ code: 'INVALID_TRANSPORT_MODE' });
    expect(await failureOf(() => provider.route({ waypoints: [PARIS, LONDON], mode }))).toMatchObject({
      status: 400,
      code: 'INVALID_TRANSPORT_MODE',
    });
  });

  it('needs at least two waypoints for a route', async () => {
    expect(await failureOf(() => provider.route({ waypoints: [PARIS], mode: 'car' }))).toMatchObject({
      status: 400,
      code: 'TOO_FEW_WAYPOINTS',
    });
  });

  it.each([-1, 1.5, Number.NaN])('refuses a service time of %s seconds', async (service_seconds) => {
    const error = await failureOf(() => provider.route({ waypoints: [PARIS, { ...LONDON, service_seconds }], mode: 'car' }));
    expect(error).toMatchObject({ status: 400, code: 'INVALID_SERVICE_TIME', field: 'waypoints.1.service_seconds' });
  });

  it('refuses an invalid departure time', async () => {
    const error = await failureOf(() =>
      provider.route({ waypoints: [PARIS, LONDON], mode: 'car', departure_time: new Date('not a date') }),
    );
    expect(error).toMatchObject({ status: 400, code: 'INVALID_DEPARTURE_TIME' });
  });
});

describe('offline provider config', () => {
  it.each([
    [{ profiles: { car: { speed_kmh: 0 } } }, 'profiles.car.speed_kmh'],
    [{ profiles: { bike: { detour_factor: 0.8 } } }, 'profiles.bike.detour_factor'],
    [{ profiles: { boat: { speed_kmh: 20 } } }, 'profiles.boat'],
    [{ max_matrix_cells: 0 }, 'max_matrix_cells'],
  ])('refuses %o with 400 INVALID_MAPPING_CONFIG on %s', async (config, field) => {
    const error = await failureOf(() => createOfflineProvider(config as never));
    expect(error).toMatchObject({ status: 400, code: 'INVALID_MAPPING_CONFIG', field });
  });
});

describe('choosing a provider for a site', () => {
  const straight = { profiles: { car: { detour_factor: 1 } } };

  it('gives the offline provider with defaults to a site with no or an inactive mapping integration', async () => {
    const expected = await createOfflineProvider().route({ waypoints: [PARIS, LONDON], mode: 'car' });
    for (const integration of [null, { integration_key: 'offline', config: straight, is_active: false }]) {
      const chosen = createMappingProvider(integration);
      expect(chosen.name).toBe('offline');
      expect(await chosen.route({ waypoints: [PARIS, LONDON], mode: 'car' })).toEqual(expected);
    }
  });

  it('passes the integration config to the provider', async () => {
    const chosen = createMappingProvider({ integration_key: 'offline', config: straight, is_active: true });
    const route = await chosen.route({ waypoints: [PARIS, LONDON], mode: 'car' });
    expect(route.distance_meters / 1000).toBeCloseTo(343.56, 1);
  });

  it('refuses an integration with no provider in this build instead of silently estimating', async () => {
    for (const integration_key of ['here', 'constructor']) {
      const error = await failureOf(() => createMappingProvider({ integration_key, config: {}, is_active: true }));
      expect(error).toMatchObject({ status: 422, code: 'MAPPING_PROVIDER_UNKNOWN' });
    }
  });

  it('refuses a malformed config for the chosen provider', async () => {
    const config = { profiles: { van: { speed_kmh: -5 } } };
    const error = await failureOf(() => createMappingProvider({ integration_key: 'offline', config, is_active: true }));
    expect(error).toMatchObject({ status: 400, code: 'INVALID_MAPPING_CONFIG', field: 'profiles.van.speed_kmh' });
  });
});

describe('transport mode of a vehicle type', () => {
  it.each([
    ['van', 'van'],
    ['on_foot', 'on_foot'],
    ['cargo_bike', 'bike'],
    ['motorcycle', 'scooter'],
    ['other', 'car'],
    ['toString', 'car'],
  ])('a %s travels by %s', (vehicleType, mode) => {
    expect(transportModeFor(vehicleType)).toBe(mode);
  });
});
