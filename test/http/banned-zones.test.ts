import { beforeAll, describe, expect, it } from 'vitest';
import { jobRequest, type JobBody } from '../support/job-fixtures.ts';
import { useTwoSites } from '../support/two-sites.ts';

type One<T = Record<string, unknown>> = { data: T };
type Many<T = Record<string, unknown>> = { data: T[] };
type Failure = { code: string; error: string; fields?: { field: string }[]; details?: { hits: { stop_index: number; zone_id: string; zone_name: string }[] } };
type Audit = { action: string; new_data: { zone_ids?: string[] } };

/** A square around the first stop of `jobRequest` (10 Rue de Rivoli, 48.8556 N 2.3522 E); the second stop is outside. */
const RIVOLI = { type: 'Polygon', coordinates: [[[2.34, 48.85], [2.36, 48.85], [2.36, 48.86], [2.34, 48.86], [2.34, 48.85]]] };
const OUTSIDE_STOP = { type: 'pickup', street_address: '1 Place de la Concorde', city: 'Paris', point: { lat: 48.8656, lng: 2.3212 } };

const sites = useTwoSites();
let bannedId: string;

beforeAll(async () => {
  const zone = await sites.acme.as.admin.post<One<{ id: string }>>('/api/zone', { name: 'Rivoli works', kind: 'banned', geometry: RIVOLI });
  bannedId = zone.body.data.id;
});

describe('banned zones in job creation', () => {
  it("refuses a customer's job in a banned zone even with the override flag; a dispatcher's passes with it", async () => {
    for (const override of [undefined, true]) {
      const refused = await sites.acme.as.customer.post<Failure>('/api/job', jobRequest({ customer_email: undefined, override_zone_restriction: override }));
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({ code: 'ZONE_RESTRICTED', fields: [{ field: 'stops.0' }] });
      expect(refused.body.error).toContain('Rivoli works');
      expect(refused.body.details?.hits).toEqual([{ stop_index: 0, zone_id: bannedId, zone_name: 'Rivoli works' }]);
    }
    const withoutFlag = await sites.acme.as.dispatcher.post<Failure>('/api/job', jobRequest());
    expect(withoutFlag.body).toMatchObject({ code: 'ZONE_RESTRICTED', fields: [{ field: 'stops.0' }] });

    const passed = await sites.acme.as.dispatcher.post<One<JobBody>>('/api/job', jobRequest({ override_zone_restriction: true }));
    expect(passed.status).toBe(201);
    const audit = await sites.acme.as.admin.get<Many<Audit>>(`/api/audit/search?entity_type=Job&entity_id=${passed.body.data.id}`);
    expect(audit.body.data.map((r) => r.action).sort()).toEqual(['create', 'zone_override']);
    expect(audit.body.data.find((r) => r.action === 'zone_override')?.new_data.zone_ids).toEqual([bannedId]);
  });

  it('names the stop given by address_id that lies in the zone, and lets stops outside pass', async () => {
    const address = await sites.acme.as.admin.post<One<{ id: string }>>('/api/address', { street_address: '12 Rue de Rivoli', city: 'Paris', point: { lat: 48.855, lng: 2.355 } });
    const request = jobRequest();
    const refused = await sites.acme.as.admin.post<Failure>('/api/job', { ...request, stops: [OUTSIDE_STOP, { type: 'dropoff', address_id: address.body.data.id }] });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'ZONE_RESTRICTED', fields: [{ field: 'stops.1' }] });

    const outside = await sites.acme.as.customer.post<One<JobBody>>('/api/job', { ...request, customer_email: undefined, stops: [OUTSIDE_STOP, (request.stops as unknown[])[1]] });
    expect(outside.status).toBe(201);
    const audit = await sites.acme.as.admin.get<Many<Audit>>(`/api/audit/search?entity_type=Job&entity_id=${outside.body.data.id}`);
    expect(audit.body.data.map((r) => r.action)).toEqual(['create']);
  });

  it("does not block with an inactive banned zone, a service zone or another site's zone", async () => {
    await sites.globex.as.admin.post('/api/zone', { name: 'Globex ban', kind: 'banned', geometry: RIVOLI });
    await sites.acme.as.admin.post('/api/zone', { name: 'Service area', kind: 'service', geometry: RIVOLI });
    const refused = await sites.acme.as.customer.post<Failure>('/api/job', jobRequest({ customer_email: undefined }));
    expect(refused.body.details?.hits).toEqual([{ stop_index: 0, zone_id: bannedId, zone_name: 'Rivoli works' }]);

    await sites.acme.as.admin.put('/api/zone', { id: bannedId, is_active: false });
    expect((await sites.acme.as.customer.post('/api/job', jobRequest({ customer_email: undefined }))).status).toBe(201);
    await sites.acme.as.admin.put('/api/zone', { id: bannedId, is_active: true });
  });
});
