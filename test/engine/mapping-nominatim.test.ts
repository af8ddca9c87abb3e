import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMappingProvider } from '../../engine/mapping/create-mapping-provider.ts';
import { createNominatimProvider } from '../../engine/mapping/nominatim-provider.ts';
import { createOfflineProvider } from '../../engine/mapping/offline-provider.ts';
import { startRecordedEngine, type RecordedEngine } from '../fixtures/mapping/recorded-engine.ts';

let engine: RecordedEngine;
beforeAll(async () => {
  engine = await startRecordedEngine({ '/search': { fixture: 'nominatim-search.json' }, '/reverse': { fixture: 'nominatim-reverse.json' } });
});
afterAll(() => engine.close());

const LOOPBACK = { allowLoopback: true, allowPrivateNetworks: false };
const nominatim = (extra: Record<string, unknown> = {}) => createNominatimProvider({ base_url: engine.baseUrl, ...extra }, LOOPBACK);

describe('Nominatim adapter: recorded answers', () => {
  it('geocodes a free-text address to points and labels, best first', async () => {
    const matches = await nominatim({ max_results: 2, country_codes: ['FR'], accept_language: 'fr' }).geocode('  12 Rue de Rivoli, Paris ');
    const request = engine.requests.at(-1)!;
    expect(request.pathname).toBe('/search');
    expect(Object.fromEntries(request.searchParams)).toEqual({ q: '12 Rue de Rivoli, Paris', limit: '2', countrycodes: 'fr', format: 'jsonv2', 'accept-language': 'fr' });
    expect(matches).toHaveLength(2);
    expect(matches[0]).toEqual({
      point: { lat: 48.8560412, lng: 2.3523657 },
      label: '12, Rue de Rivoli, Quartier Saint-Merri, Paris 4e Arrondissement, Paris, Île-de-France, France métropolitaine, 75004, France',
    });
  });

  it('reverse geocodes a point, and answers null where Nominatim finds no address', async () => {
    const match = await nominatim().reverseGeocode({ lat: 48.856, lng: 2.3524 });
    expect(Object.fromEntries(engine.requests.at(-1)!.searchParams)).toMatchObject({ lat: '48.856', lon: '2.3524', format: 'jsonv2' });
    expect(match?.label).toMatch(/^12, Rue de Rivoli/);
    engine.answer('/reverse', { fixture: 'nominatim-reverse-none.json' });
    expect(await nominatim().reverseGeocode({ lat: 47.5, lng: -35.2 })).toBeNull();
  });

  it('keeps routes and matrices on the offline estimate, without network calls', async () => {
    const before = engine.requests.length;
    const waypoints = [{ lat: 48.8656, lng: 2.3212 }, { lat: 48.8533, lng: 2.3692 }];
    expect(await nominatim().route({ waypoints, mode: 'car' })).toEqual(await createOfflineProvider().route({ waypoints, mode: 'car' }));
    expect(engine.requests.length).toBe(before);
  });

  it('is what a site with an active nominatim integration gets', async () => {
    const provider = createMappingProvider({ integration_key: 'nominatim', config: { base_url: engine.baseUrl }, is_active: true }, LOOPBACK);
    expect(provider.name).toBe('nominatim');
    expect((await provider.geocode('Rivoli'))[0]?.point.lat).toBeCloseTo(48.856, 3);
  });
});
