import { expect, it } from 'vitest';
import { createOperator, signIn } from '../support/fixtures.ts';
import { useOneSite } from '../support/one-site.ts';
import { createDriver, createVehicle, jobAt } from './dispatch-fixtures.ts';

const PARIS = { lat: 48.8566, lng: 2.3522 };

const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });

const assign = (body: Record<string, unknown>) => site.acme.as.dispatcher.post<{ code?: string; data?: { dispatch: { assigned_to_vehicle_id: string } } }>('/api/dispatch/assign', body);

it('a default vehicle that was switched off is no vehicle: a direct assignment asks for one, a given active one is taken', async () => {
  const retired = await createVehicle(site.acme, 'Retired van');
  const spare = await createVehicle(site.acme, 'Spare van');
  const driver = await createDriver(site.server, site.acme, { name: 'Vera Van', at: PARIS, vehicleId: retired });
  expect((await site.acme.as.admin.put('/api/vehicle', { id: retired, is_active: false })).status).toBe(200);
  const job = await jobAt(site.acme.as.dispatcher, PARIS);
  const refused = await assign({ job_id: job.id, driver_id: driver.id });
  expect(refused.status).toBe(422);
  expect(refused.body.code).toBe('VEHICLE_REQUIRED');
  const given = await assign({ job_id: job.id, driver_id: driver.id, vehicle_id: spare });
  expect(given.status).toBe(200);
  expect(given.body.data!.dispatch.assigned_to_vehicle_id).toBe(spare);
});

it('a driver whose account the platform switched off is not dispatched', async () => {
  const vehicle = await createVehicle(site.acme, 'Van of the departed');
  const driver = await createDriver(site.server, site.acme, { name: 'Gone Gus', at: PARIS, vehicleId: vehicle });
  const first = await jobAt(site.acme.as.dispatcher, PARIS);
  // The site's driver index is loaded before the change, so a cached copy would still hold the driver as active.
  expect((await assign({ job_id: first.id, driver_id: driver.id })).status).toBe(200);
  const operator = await createOperator(site.server, 'fleet-operator@platform.example');
  const session = await signIn(site.server.client(null), operator.email, operator.password);
  expect((await site.server.client(null).as({ accessToken: session.access_token }).put('/api/user', { id: driver.id, is_active: false })).status).toBe(200);
  const second = await jobAt(site.acme.as.dispatcher, PARIS);
  const refused = await assign({ job_id: second.id, driver_id: driver.id });
  expect(refused.status).toBe(409);
  expect(refused.body.code).toBe('DRIVER_NOT_ACTIVE');
});

it("a pool claim respects the driver's max_load, writing nothing", async () => {
  const vehicle = await createVehicle(site.acme, 'Small van');
  const driver = await createDriver(site.server, site.acme, { name: 'Full Fran', at: PARIS, vehicleId: vehicle, maxLoad: 1 });
  const held = await jobAt(site.acme.as.dispatcher, PARIS);
  expect((await assign({ job_id: held.id, driver_id: driver.id })).status).toBe(200);
  const offered = await jobAt(site.acme.as.dispatcher, PARIS);
  const posted = await site.acme.as.dispatcher.post<{ data: { succeeded: { id: string }[] } }>('/api/dispatch/pool', { job_ids: [offered.id] });
  const offer = posted.body.data.succeeded[0]!.id;
  const refused = await driver.client.post<{ code: string }>('/api/dispatch/claim', { dispatch_id: offer });
  expect(refused.status).toBe(409);
  expect(refused.body.code).toBe('DRIVER_AT_CAPACITY');
  const record = await site.acme.as.dispatcher.get<{ data: { assigned_to_driver_id: string | null; status: string } }>(`/api/dispatch?id=${offer}`);
  expect(record.body.data).toMatchObject({ assigned_to_driver_id: null, status: 'pending' });
});

it('lists a suspended driver asked for by operational_status as unavailable (inactive), not as available', async () => {
  const vehicle = await createVehicle(site.acme, 'Parked van');
  const driver = await createDriver(site.server, site.acme, { name: 'Paused Pia', at: PARIS, vehicleId: vehicle });
  expect((await site.acme.as.dispatcher.put('/api/worker', { id: driver.id, operational_status: 'suspended' })).status).toBe(200);
  const job = await jobAt(site.acme.as.dispatcher, PARIS);
  const listed = await site.acme.as.dispatcher.get<{ data: { driver: { user_id?: string; id?: string }; available: boolean; unavailable_reason: string | null }[] }>(
    `/api/dispatch/available-drivers?job_id=${job.id}&operational_status=suspended`,
  );
  expect(listed.status).toBe(200);
  const entry = listed.body.data.find((e) => (e.driver.id ?? e.driver.user_id) === driver.id);
  expect(entry).toMatchObject({ available: false, unavailable_reason: 'inactive' });
  expect((await assign({ job_id: job.id, driver_id: driver.id })).body.code).toBe('DRIVER_NOT_ACTIVE');
});

it('a pool claim by a driver without an active default vehicle says so (409 NO_DEFAULT_VEHICLE), and the offer stays open', async () => {
  const vehicle = await createVehicle(site.acme, 'Van in the shop');
  const driver = await createDriver(site.server, site.acme, { name: 'Walking Wes', at: PARIS, vehicleId: vehicle });
  expect((await site.acme.as.admin.put('/api/vehicle', { id: vehicle, is_active: false })).status).toBe(200);
  const offered = await jobAt(site.acme.as.dispatcher, PARIS);
  const posted = await site.acme.as.dispatcher.post<{ data: { succeeded: { id: string }[] } }>('/api/dispatch/pool', { job_ids: [offered.id] });
  const offer = posted.body.data.succeeded[0]!.id;
  const refused = await driver.client.post<{ code: string }>('/api/dispatch/claim', { dispatch_id: offer });
  expect([refused.status, refused.body.code]).toEqual([409, 'NO_DEFAULT_VEHICLE']);
  const record = await site.acme.as.dispatcher.get<{ data: { assigned_to_driver_id: string | null; status: string } }>(`/api/dispatch?id=${offer}`);
  expect(record.body.data).toMatchObject({ assigned_to_driver_id: null, status: 'pending' });
});
