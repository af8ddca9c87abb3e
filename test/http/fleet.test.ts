import { describe, expect, it } from 'vitest';
import { useTwoSites } from '../support/two-sites.ts';

type One<T = Record<string, unknown>> = { data: T };
type Many<T = Record<string, unknown>> = { data: T[]; meta: { pagination: { totalItems: number } } };
type Failure = { code: string; error: string; fields?: { field: string }[]; details?: Record<string, unknown> };
type Vehicle = { id: string; site_id: string; name: string; type: string; plate_number: string | null; capacity: Record<string, number> | null; is_active: boolean };
type Team = { id: string; name: string; description: string | null; is_active: boolean };
type Zone = { id: string; name: string; kind: string; description: string | null; is_active: boolean; geometry: unknown };
type Audit = { action: string };

/** A square around 10 Rue de Rivoli, Paris. */
const RIVOLI = { type: 'Polygon', coordinates: [[[2.34, 48.85], [2.36, 48.85], [2.36, 48.86], [2.34, 48.86], [2.34, 48.85]]] };
const ELSEWHERE = { type: 'Polygon', coordinates: [[[10, 10], [11, 10], [11, 11], [10, 10]]] };

const sites = useTwoSites();

describe('vehicles', () => {
  it('creates, reads, updates three-state and searches vehicles, auditing each change', async () => {
    const created = await sites.acme.as.dispatcher.post<One<Vehicle>>('/api/vehicle', { name: 'Van 1', type: 'van', plate_number: 'AB-123-CD', capacity: { weight_kg: 800, volume_m3: 6.5 } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ id: expect.stringMatching(/^veh_/), site_id: sites.acme.site.id, is_active: true, capacity: { weight_kg: 800, volume_m3: 6.5 } });
    const id = created.body.data.id;
    expect((await sites.acme.as.driver.get<One<Vehicle>>(`/api/vehicle?id=${id}`)).body.data.plate_number).toBe('AB-123-CD');

    const updated = await sites.acme.as.admin.put<One<Vehicle>>('/api/vehicle', { id, plate_number: null, capacity: { items: 40 } });
    expect(updated.body.data).toMatchObject({ name: 'Van 1', type: 'van', plate_number: null, capacity: { items: 40 } });
    const cleared = await sites.acme.as.admin.put<One<Vehicle>>('/api/vehicle', { id, capacity: null, is_active: false });
    expect(cleared.body.data).toMatchObject({ name: 'Van 1', capacity: null, is_active: false });

    await sites.acme.as.admin.post('/api/vehicle', { name: 'Cargo bike', type: 'cargo_bike', plate_number: 'BIKE-7' });
    await sites.globex.as.admin.post('/api/vehicle', { name: 'Globex bike', type: 'bike' });
    const byPlate = await sites.acme.as.driver.get<Many<Vehicle>>('/api/vehicle/search?q=bike-7');
    expect(byPlate.body.data.map((v) => v.name)).toEqual(['Cargo bike']);
    const byType = await sites.acme.as.admin.get<Many<Vehicle>>('/api/vehicle/search?type=van&is_active=false');
    expect(byType.body.data.map((v) => v.id)).toEqual([id]);
    expect((await sites.acme.as.admin.get<Many<Vehicle>>('/api/vehicle/search?q=globex')).body.meta.pagination.totalItems).toBe(0);

    const audit = await sites.acme.as.admin.get<Many<Audit>>(`/api/audit/search?entity_type=Vehicle&entity_id=${id}`);
    expect(audit.body.data.map((r) => r.action).sort()).toEqual(['create', 'update', 'update']);
  });

  it('refuses unknown types, negative capacities, unknown fields and nulls for required fields', async () => {
    for (const body of [
      { name: 'X', type: 'hovercraft' },
      { name: 'X', type: 'car', capacity: { weight_kg: -1 } },
      { name: 'X', type: 'car', capacity: { items: 1.5 } },
      { name: 'X', type: 'car', colour: 'red' },
    ]) {
      const response = await sites.acme.as.admin.post<Failure>('/api/vehicle', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
    }
    const made = await sites.acme.as.admin.post<One<Vehicle>>('/api/vehicle', { name: 'Car', type: 'car' });
    expect((await sites.acme.as.admin.put('/api/vehicle', { id: made.body.data.id, name: null })).status).toBe(400);
  });
});

describe('teams', () => {
  it('creates, reads, updates three-state and searches teams', async () => {
    const created = await sites.acme.as.admin.post<One<Team>>('/api/team', { name: 'North crew', description: 'Left bank' });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ id: expect.stringMatching(/^team_/), is_active: true });
    const id = created.body.data.id;
    const updated = await sites.acme.as.dispatcher.put<One<Team>>('/api/team', { id, description: null });
    expect(updated.body.data).toMatchObject({ name: 'North crew', description: null, is_active: true });
    await sites.acme.as.admin.put('/api/team', { id, is_active: false });
    await sites.acme.as.admin.post('/api/team', { name: 'South crew' });
    expect((await sites.acme.as.driver.get<Many<Team>>('/api/team/search?q=north')).body.data.map((t) => t.id)).toEqual([id]);
    const active = await sites.acme.as.admin.get<Many<Team>>('/api/team/search?is_active=true');
    expect(active.body.data.map((t) => t.name)).toEqual(['South crew']);
    expect((await sites.acme.as.driver.get<One<Team>>(`/api/team?id=${id}`)).body.data.is_active).toBe(false);
  });
});

describe('zones', () => {
  it('creates, reads, updates three-state and searches zones, by point too', async () => {
    const created = await sites.acme.as.admin.post<One<Zone>>('/api/zone', { name: 'Rivoli', kind: 'service', geometry: RIVOLI, description: 'Centre' });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ id: expect.stringMatching(/^zone_/), kind: 'service', geometry: RIVOLI, is_active: true });
    const id = created.body.data.id;
    const multi = { type: 'MultiPolygon', coordinates: [ELSEWHERE.coordinates, [[[20, 20], [21, 20], [21, 21], [20, 20]]]] };
    const far = await sites.acme.as.dispatcher.post<One<Zone>>('/api/zone', { name: 'Far away', kind: 'service', geometry: multi });
    expect(far.status).toBe(201);

    const updated = await sites.acme.as.dispatcher.put<One<Zone>>('/api/zone', { id, description: null, name: 'Rivoli area' });
    expect(updated.body.data).toMatchObject({ name: 'Rivoli area', description: null, kind: 'service', geometry: RIVOLI });

    const containing = await sites.acme.as.driver.get<Many<Zone>>('/api/zone/search?contains_lat=48.8556&contains_lng=2.3522');
    expect(containing.body.data.map((z) => z.id)).toEqual([id]);
    expect(containing.body.meta.pagination.totalItems).toBe(1);
    const inSecond = await sites.acme.as.admin.get<Many<Zone>>('/api/zone/search?contains_lat=20.2&contains_lng=20.5');
    expect(inSecond.body.data.map((z) => z.id)).toEqual([far.body.data.id]);
    expect((await sites.acme.as.admin.get<Many<Zone>>('/api/zone/search?contains_lat=0&contains_lng=0')).body.data).toEqual([]);
    expect((await sites.acme.as.admin.get<Failure>('/api/zone/search?contains_lat=1')).status).toBe(400);
    expect((await sites.acme.as.admin.get<Many<Zone>>('/api/zone/search?q=far&kind=service')).body.data.map((z) => z.id)).toEqual([far.body.data.id]);
    expect((await sites.acme.as.admin.get<Many<Zone>>('/api/zone/search?kind=banned')).body.data).toEqual([]);
    await sites.acme.as.admin.put('/api/zone', { id, is_active: false });
    const activeOnly = await sites.acme.as.admin.get<Many<Zone>>('/api/zone/search?is_active=true&contains_lat=48.8556&contains_lng=2.3522');
    expect(activeOnly.body.data).toEqual([]);
  });

  it('refuses invalid GeoJSON, naming geometry', async () => {
    const invalid = [
      { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1]]] },
      { type: 'Polygon', coordinates: [[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]] },
      { type: 'Polygon', coordinates: [[[0, 0], [200, 0], [1, 1], [0, 0]]] },
      { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 95], [0, 0]]] },
      { type: 'Point', coordinates: [2.35, 48.85] },
      { type: 'LineString', coordinates: [[0, 0], [1, 1]] },
      { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [0, 0]]] },
      { type: 'Polygon', coordinates: [] },
      { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]], [[5, 5], [6, 5], [6, 6], [5, 5]]] },
    ];
    for (const geometry of invalid) {
      const response = await sites.acme.as.admin.post<Failure>('/api/zone', { name: 'Bad', kind: 'banned', geometry });
      expect(response.status, JSON.stringify(geometry)).toBe(400);
      expect(response.body.fields?.some((f) => f.field.startsWith('geometry')), JSON.stringify(response.body)).toBe(true);
    }
    const good = await sites.acme.as.admin.post<One<Zone>>('/api/zone', { name: 'Good', kind: 'banned', geometry: ELSEWHERE });
    const bowtie = { type: 'Polygon', coordinates: [[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]] };
    const update = await sites.acme.as.admin.put<Failure>('/api/zone', { id: good.body.data.id, geometry: bowtie });
    expect(update.status).toBe(400);
    expect(update.body).toMatchObject({ code: 'INVALID_GEOMETRY', fields: [{ field: 'geometry' }] });
    expect((await sites.acme.as.admin.post('/api/zone', { name: 'Bad kind', kind: 'forbidden', geometry: ELSEWHERE })).status).toBe(400);
  });
});

describe('fleet access', () => {
  it("answers 404 for another site's vehicles, teams and zones, on read and on update", async () => {
    const bodies = { vehicle: { name: 'G', type: 'car' }, team: { name: 'G' }, zone: { name: 'G', kind: 'service', geometry: ELSEWHERE } };
    for (const [path, body] of Object.entries(bodies)) {
      const foreign = await sites.globex.as.admin.post<One<{ id: string }>>(`/api/${path}`, body);
      expect(foreign.status).toBe(201);
      expect((await sites.acme.as.admin.get(`/api/${path}?id=${foreign.body.data.id}`)).status).toBe(404);
      expect((await sites.acme.as.admin.put(`/api/${path}`, { id: foreign.body.data.id, name: 'Stolen' })).status).toBe(404);
      expect((await sites.globex.as.admin.get<One<{ name: string }>>(`/api/${path}?id=${foreign.body.data.id}`)).body.data.name).toBe('G');
    }
  });

  it('lets only admins and dispatchers manage the fleet, and keeps it from customers', async () => {
    const bodies = { vehicle: { name: 'N', type: 'car' }, team: { name: 'N' }, zone: { name: 'N', kind: 'service', geometry: ELSEWHERE } };
    for (const [path, body] of Object.entries(bodies)) {
      const made = await sites.acme.as.admin.post<One<{ id: string }>>(`/api/${path}`, body);
      for (const role of ['driver', 'customer'] as const) {
        expect((await sites.acme.as[role].post(`/api/${path}`, body)).status).toBe(403);
        expect((await sites.acme.as[role].put(`/api/${path}`, { id: made.body.data.id, name: 'x' })).status).toBe(403);
      }
      expect((await sites.acme.as.customer.get(`/api/${path}?id=${made.body.data.id}`)).status).toBe(403);
      expect((await sites.acme.as.customer.get(`/api/${path}/search`)).status).toBe(403);
      expect((await sites.acme.as.driver.get(`/api/${path}/search`)).status).toBe(200);
    }
  });
});
