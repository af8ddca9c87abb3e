import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOfflineProvider } from '../../engine/mapping/offline-provider.ts';
import { createSiteFixture, signIn, type SiteFixture } from '../support/fixtures.ts';
import type { ApiClient } from '../support/http-client.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

type One<T> = { data: T };
type Failure = { code: string; error: string; fields?: { field: string; message: string }[] };
type StopEta = {
  stop_id: string; stop_index: number; type: string; estimated_arrival_at: string | null; estimated_completion_at: string | null;
  cumulative_distance_meters: number | null; cumulative_duration_seconds: number | null;
};
type EtaResult = {
  job_id: string; driver_id: string | null; computed_at: string; best_driver_id: string | null; eligible_driver_count: number;
  located_driver_count: number; pickup_duration_seconds: number | null; pickup_eta: string | null; stops: StopEta[];
};
type Config = {
  id: string; enabled: boolean; debounce_seconds: number; delivery_method: string; recipient_type: string; trigger_type: string;
  trigger_value: number; template: { id: string; title: string; body: string; is_custom: boolean };
};

const PICKUP = { lat: 48.8556, lng: 2.3522 };
const DROPOFF = { lat: 48.8662, lng: 2.3047 };
const STOPS = [
  { type: 'pickup', street_address: '10 Rue de Rivoli', city: 'Paris', point: PICKUP },
  { type: 'dropoff', street_address: '5 Avenue Montaigne', city: 'Paris', point: DROPOFF },
];

let server: TestServer;
let acme: SiteFixture;
let globex: SiteFixture;
let jobStates: Record<string, string>;
let serviceTypeId: string;

const now = () => server.clock.now().toISOString();

async function session(email: string, password: string): Promise<ApiClient> {
  const { access_token } = await signIn(server.client('acme'), email, password);
  return server.client('acme').as({ accessToken: access_token });
}

async function expectOk(pending: Promise<{ status: number; text: string }>): Promise<void> {
  const response = await pending;
  if (response.status !== 200) throw new Error(`expected 200, got ${response.status}: ${response.text}`);
}

/** A new driver who is a worker of acme, signed in, available (unless told), and at `at` (when given). */
async function newDriver(email: string, at: { lat: number; lng: number } | null, available = true): Promise<{ id: string; client: ApiClient }> {
  const made = await acme.as.dispatcher.post<One<{ id: string }>>('/api/worker', { email, first_name: email.split('@')[0], password: 'driver-password' });
  if (made.status !== 201) throw new Error(`worker create failed: ${made.text}`);
  const client = await session(email, 'driver-password');
  if (available) await expectOk(client.put('/api/driver/status', { availability: 'available' }));
  if (at) await expectOk(client.post('/api/driver/location', { ...at, recorded_at: now() }));
  return { id: made.body.data.id, client };
}

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  globex = await createSiteFixture(server, 'globex');
  jobStates = await stateIds(acme.as.admin, 'job');
  const type = await acme.as.admin.post<One<{ id: string }>>('/api/servicetype', { name: 'Courier', default_duration_seconds: 600 });
  if (type.status !== 201) throw new Error(`service type create failed: ${type.text}`);
  serviceTypeId = type.body.data.id;
});
afterAll(() => server.close());

describe('GET /eta/job', () => {
  it("an assigned job: cumulative figures from the driver's position agree with the offline provider, ordered, arrival before completion", async () => {
    const driver = await newDriver('eta.assigned@acme.example', { lat: 48.8738, lng: 2.295 });
    const customer = await session(acme.users.customer.email, acme.users.customer.password);
    const job = await createJob(acme.as.dispatcher, {
      customer_email: undefined,
      customer_user_id: acme.users.customer.id,
      driver_user_id: driver.id,
      service_type_id: serviceTypeId,
      stops: STOPS,
    });
    expect((await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched })).status).toBe(200);

    const response = await acme.as.dispatcher.get<One<EtaResult>>(`/api/eta/job?id=${job.id}`);
    expect(response.status).toBe(200);
    const eta = response.body.data;
    expect(eta).toMatchObject({ job_id: job.id, driver_id: driver.id, best_driver_id: driver.id, eligible_driver_count: 1, located_driver_count: 1 });
    expect(eta.stops.map((s) => [s.stop_id, s.stop_index, s.type])).toEqual([
      [job.stops[0]!.id, 0, 'pickup'],
      [job.stops[1]!.id, 1, 'dropoff'],
    ]);
    // The same trip through the offline provider: 600 s of service shared by the two stops.
    const expected = await createOfflineProvider().route({
      waypoints: [{ lat: 48.8738, lng: 2.295 }, { ...PICKUP, service_seconds: 300 }, { ...DROPOFF, service_seconds: 300 }],
      mode: 'car',
    });
    const computedAt = Date.parse(eta.computed_at);
    eta.stops.forEach((stop, i) => {
      const leg = expected.legs[i]!;
      expect(stop.cumulative_distance_meters).toBe(Math.round(leg.cumulative_distance_meters));
      expect(stop.cumulative_duration_seconds).toBe(leg.cumulative_duration_seconds);
      expect(Date.parse(stop.estimated_arrival_at!)).toBe(computedAt + leg.cumulative_duration_seconds * 1000);
      expect(Date.parse(stop.estimated_completion_at!) - Date.parse(stop.estimated_arrival_at!)).toBe(300_000);
    });
    const [first, second] = eta.stops as [StopEta, StopEta];
    expect(second.cumulative_distance_meters!).toBeGreaterThan(first.cumulative_distance_meters!);
    expect(Date.parse(second.estimated_arrival_at!)).toBeGreaterThan(Date.parse(first.estimated_completion_at!));
    expect(eta.pickup_duration_seconds).toBe(first.cumulative_duration_seconds);
    expect(eta.pickup_eta).toBe(first.estimated_arrival_at);

    // The job's customer and its driver read it too; another customer, another site and a stranger's id do not.
    expect((await customer.get<One<EtaResult>>(`/api/eta/job?id=${job.id}`)).body.data.stops).toHaveLength(2);
    expect((await driver.client.get<One<EtaResult>>(`/api/eta/job?id=${job.id}`)).status).toBe(200);
    expect((await acme.as.customer.get<Failure>(`/api/eta/job?id=${job.id}`)).status).toBe(404);
    expect((await globex.as.admin.get<Failure>(`/api/eta/job?id=${job.id}`)).body.code).toBe('NOT_FOUND');
    expect((await globex.as.admin.get<Failure>(`/api/eta/job?id=${job.id}`)).status).toBe(404);
    expect((await acme.as.admin.get<Failure>('/api/eta/job?id=job_nope')).status).toBe(404);
  });

  it("a stop whose window opens later is not reached before it opens, and the stops after it wait with it", async () => {
    // Not available: the unassigned-job test below counts the site's available drivers.
    const driver = await newDriver('eta.window@acme.example', { lat: 48.8738, lng: 2.295 }, false);
    const opens = new Date(server.clock.now().getTime() + 20 * 3600_000);
    const closes = new Date(opens.getTime() + 2 * 3600_000);
    const windowed = [{ ...STOPS[0]!, complete_after: opens.toISOString(), complete_before: closes.toISOString() }, STOPS[1]!];
    const job = await createJob(acme.as.dispatcher, { driver_user_id: driver.id, service_type_id: serviceTypeId, stops: windowed });
    expect((await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched })).status).toBe(200);
    const eta = (await acme.as.dispatcher.get<One<EtaResult>>(`/api/eta/job?id=${job.id}`)).body.data;
    const [pickup, dropoff] = eta.stops as [StopEta, StopEta];
    // The pickup is a few minutes' drive away, but its window opens in 20 hours: the driver waits for it.
    expect(Date.parse(pickup.estimated_arrival_at!)).toBe(opens.getTime());
    expect(pickup.cumulative_duration_seconds).toBe(Math.round((opens.getTime() - Date.parse(eta.computed_at)) / 1000));
    expect(Date.parse(dropoff.estimated_arrival_at!)).toBeGreaterThan(Date.parse(pickup.estimated_completion_at!));
    expect(eta.pickup_eta).toBe(pickup.estimated_arrival_at);
  });

  it("a driver's two routes of one day are driven one after the other, not stop by stop in turn, by the routes' vehicle", async () => {
    const origin = { lat: 48.8738, lng: 2.295 };
    // No default vehicle (a car, for ETAs): the routes go out with a cargo bike, which is what the driver rides.
    const driver = await newDriver('eta.tworoutes@acme.example', origin, false);
    const bike = await acme.as.admin.post<One<{ id: string }>>('/api/vehicle', { name: 'ETA cargo bike', type: 'cargo_bike' });
    expect(bike.status).toBe(201);
    const vehicle = bike.body.data.id;
    const far = [
      { type: 'pickup', street_address: '1 Rue de Lyon', city: 'Paris', point: { lat: 48.84, lng: 2.38 } },
      { type: 'dropoff', street_address: '2 Rue de Lyon', city: 'Paris', point: { lat: 48.83, lng: 2.39 } },
    ];
    const first = await createJob(acme.as.dispatcher, { stops: STOPS });
    const second = await createJob(acme.as.dispatcher, { stops: far });
    for (const [name, job] of [['Morning A', first], ['Morning B', second]] as const) {
      // Today's routes (the site's zone is UTC): a later day's would wait for that day to begin.
      const route = await acme.as.dispatcher.post<One<{ id: string }>>('/api/route', { name, service_date: server.clock.now().toISOString().slice(0, 10), job_ids: [job.id] });
      expect(route.status).toBe(201);
      const sent = await acme.as.dispatcher.post('/api/dispatch/route', { route_id: route.body.data.id, driver_id: driver.id, vehicle_id: vehicle });
      expect(sent.status, sent.text).toBe(200);
    }
    const eta = (await acme.as.dispatcher.get<One<EtaResult>>(`/api/eta/job?id=${first.id}`)).body.data;
    const alone = await createOfflineProvider().route({ waypoints: [origin, { ...PICKUP, service_seconds: 300 }, { ...DROPOFF, service_seconds: 300 }], mode: 'bike' });
    expect(eta.stops.map((stop) => stop.cumulative_distance_meters)).toEqual(alone.legs.map((leg) => Math.round(leg.cumulative_distance_meters)));
    expect(eta.stops.map((stop) => stop.cumulative_duration_seconds)).toEqual(alone.legs.map((leg) => Math.round(leg.cumulative_duration_seconds)));
  });

  it("a route of a later day that has not started: its stops are not reached before that day begins", async () => {
    const driver = await newDriver('eta.laterday@acme.example', { lat: 48.8738, lng: 2.295 }, false);
    const job = await createJob(acme.as.dispatcher, { stops: STOPS });
    // Two days ahead: a later date whatever the time of day; the site's zone is UTC.
    const day = new Date(server.clock.now().getTime() + 48 * 3600_000).toISOString().slice(0, 10);
    const route = await acme.as.dispatcher.post<One<{ id: string }>>('/api/route', { name: 'Later day', service_date: day, job_ids: [job.id] });
    expect(route.status, route.text).toBe(201);
    const van = await acme.as.admin.post<One<{ id: string }>>('/api/vehicle', { name: 'ETA later-day van', type: 'van' });
    const sent = await acme.as.dispatcher.post('/api/dispatch/route', { route_id: route.body.data.id, driver_id: driver.id, vehicle_id: van.body.data.id });
    expect(sent.status, sent.text).toBe(200);
    const eta = (await acme.as.dispatcher.get<One<EtaResult>>(`/api/eta/job?id=${job.id}`)).body.data;
    // The pickup is minutes away, but the route is driven on its day: no "arriving in 4 minutes" today.
    expect(eta.stops[0]!.estimated_arrival_at).toBe(`${day}T00:00:00.000Z`);
    expect(eta.pickup_eta).toBe(eta.stops[0]!.estimated_arrival_at);
  });

  it("a job on no route given today comes before tomorrow's route, and does not wait for its windows", async () => {
    const driver = await newDriver('eta.unrouted@acme.example', { lat: 48.8738, lng: 2.295 }, false);
    const van = await acme.as.admin.post<One<{ id: string }>>('/api/vehicle', { name: 'ETA unrouted van', type: 'van' });
    // 30 h ahead: on a later calendar date whatever the time of day (the route's service day is that date).
    const opens = new Date(server.clock.now().getTime() + 30 * 3600_000);
    const tomorrow = await createJob(acme.as.dispatcher, { stops: [{ ...STOPS[0]!, complete_after: opens.toISOString(), complete_before: new Date(opens.getTime() + 7200_000).toISOString() }, STOPS[1]!] });
    const routed = await acme.as.dispatcher.post('/api/dispatch/assign', { job_id: tomorrow.id, driver_id: driver.id, vehicle_id: van.body.data.id });
    expect(routed.status, routed.text).toBe(200);
    const today = await createJob(acme.as.dispatcher, { driver_user_id: driver.id, stops: STOPS });
    expect((await acme.as.dispatcher.post('/api/job/state', { job_id: today.id, workflow_state_id: jobStates.dispatched })).status).toBe(200);
    const eta = (await acme.as.dispatcher.get<One<EtaResult>>(`/api/eta/job?id=${today.id}`)).body.data;
    expect(eta.stops[0]!.cumulative_duration_seconds!).toBeLessThan(3600);
  });

  it('an unassigned job: the best driver is the nearest eligible one (an offline driver is not eligible, however close)', async () => {
    const job = await createJob(acme.as.dispatcher, { stops: STOPS });
    const near = await newDriver('eta.near@acme.example', { lat: 48.86, lng: 2.35 });
    const far = await newDriver('eta.far@acme.example', { lat: 48.9, lng: 2.25 });
    await newDriver('eta.offline@acme.example', { lat: 48.8557, lng: 2.3523 }, false);
    await newDriver('eta.nowhere@acme.example', null);

    const eta = (await acme.as.dispatcher.get<One<EtaResult>>(`/api/eta/job?id=${job.id}`)).body.data;
    expect(eta.best_driver_id).toBe(near.id);
    expect(eta.best_driver_id).not.toBe(far.id);
    // Available workers: near, far, nowhere, and the assigned driver of the first test; three of them have a position.
    expect(eta.eligible_driver_count).toBe(4);
    expect(eta.located_driver_count).toBe(3);
    const matrix = await createOfflineProvider().matrix([{ lat: 48.86, lng: 2.35 }], [PICKUP], 'car');
    expect(eta.pickup_duration_seconds).toBe(matrix.durations_seconds[0]![0]);
    expect(Date.parse(eta.pickup_eta!)).toBe(Date.parse(eta.computed_at) + eta.pickup_duration_seconds! * 1000);
    expect(eta.stops[0]!.cumulative_duration_seconds).toBe(eta.pickup_duration_seconds);
    // Without a service type, each stop takes the documented 300 s.
    expect(Date.parse(eta.stops[0]!.estimated_completion_at!) - Date.parse(eta.stops[0]!.estimated_arrival_at!)).toBe(300_000);

    // The customer sees the times but not which driver.
    const customerJob = await createJob(acme.as.dispatcher, { customer_email: undefined, customer_user_id: acme.users.customer.id, stops: STOPS });
    const customer = await session(acme.users.customer.email, acme.users.customer.password);
    const seen = (await customer.get<One<EtaResult>>(`/api/eta/job?id=${customerJob.id}`)).body.data;
    expect(seen.best_driver_id).toBeNull();
    expect(seen.pickup_duration_seconds).toBe(eta.pickup_duration_seconds);
  });

  it("an unassigned job whose pickup window opens later: the pickup figures wait for it, as its first stop's do", async () => {
    // Runs after the test above: its available, located drivers are the candidates.
    const opens = new Date(server.clock.now().getTime() + 20 * 3600_000);
    const windowed = [{ ...STOPS[0]!, complete_after: opens.toISOString() }, STOPS[1]!];
    const job = await createJob(acme.as.dispatcher, { stops: windowed });
    const eta = (await acme.as.dispatcher.get<One<EtaResult>>(`/api/eta/job?id=${job.id}`)).body.data;
    expect(eta.best_driver_id).not.toBeNull();
    expect(Date.parse(eta.stops[0]!.estimated_arrival_at!)).toBe(opens.getTime());
    expect(eta.pickup_eta).toBe(eta.stops[0]!.estimated_arrival_at);
    expect(eta.pickup_duration_seconds).toBe(eta.stops[0]!.cumulative_duration_seconds);
  });
});

describe('/eta/notification-config', () => {
  const base = { trigger_type: 'time_before_arrival', trigger_value: 10, recipient_type: 'customer', delivery_method: 'sms' };

  it('upserts by trigger, recipient and delivery method, with a default template until a custom one is given', async () => {
    const created = await acme.as.admin.put<One<Config>>('/api/eta/notification-config', base);
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ ...base, enabled: true, debounce_seconds: 300, template: { is_custom: false } });
    expect(created.body.data.template.body).toContain('{{eta_minutes}}');

    const updated = await acme.as.admin.put<One<Config>>('/api/eta/notification-config', { ...base, trigger_value: 15, debounce_seconds: 60 });
    expect(updated.body.data).toMatchObject({ id: created.body.data.id, trigger_value: 15, debounce_seconds: 60 });

    const custom = { title: 'Hi {{customer_name}}', body: '{{driver_name}} arrives at {{ eta_time }} ({{eta_minutes}} min), job {{job_id}}' };
    const withTemplate = await acme.as.admin.put<One<Config>>('/api/eta/notification-config', { ...base, trigger_value: 15, template: custom });
    expect(withTemplate.body.data.template).toMatchObject({ ...custom, is_custom: true });
    // An omitted template is kept; null restores the default.
    expect((await acme.as.admin.put<One<Config>>('/api/eta/notification-config', { ...base, trigger_value: 15 })).body.data.template.is_custom).toBe(true);
    expect((await acme.as.admin.put<One<Config>>('/api/eta/notification-config', { ...base, trigger_value: 15, template: null })).body.data.template.is_custom).toBe(false);

    const other = await acme.as.admin.put<One<Config>>('/api/eta/notification-config', { ...base, trigger_type: 'distance_away', trigger_value: 0.5, enabled: false });
    expect(other.body.data.id).not.toBe(created.body.data.id);
    expect(other.body.data.template.id).toBe('default.distance_away.customer');
    const list = await acme.as.admin.get<{ data: Config[]; meta: { total: number } }>('/api/eta/notification-config');
    expect(list.body.meta.total).toBe(2);
    expect(list.body.data.map((c) => c.id)).toEqual([created.body.data.id, other.body.data.id]);
    // By id, the key fields can change (but not onto another config's key).
    const moved = await acme.as.admin.put<One<Config>>('/api/eta/notification-config', { ...base, id: other.body.data.id, delivery_method: 'email' });
    expect(moved.body.data).toMatchObject({ id: other.body.data.id, trigger_type: 'time_before_arrival', delivery_method: 'email', enabled: false });
    expect((await acme.as.admin.put<Failure>('/api/eta/notification-config', { ...base, id: other.body.data.id })).body.code).toBe('ETA_CONFIG_EXISTS');
    expect((await globex.as.admin.get<{ meta: { total: number } }>('/api/eta/notification-config')).body.meta.total).toBe(0);
    expect((await globex.as.admin.put<Failure>('/api/eta/notification-config', { ...base, id: created.body.data.id })).status).toBe(404);
  });

  it('refuses bad configs with 400 naming the field, and non-admins with 403; nothing changes', async () => {
    const before = (await acme.as.admin.get<{ meta: { total: number } }>('/api/eta/notification-config')).body.meta.total;
    const unknownVariable = await acme.as.admin.put<Failure>('/api/eta/notification-config', { ...base, recipient_type: 'admin', template: { title: 'ok', body: 'ETA {{eta_minuts}} and {{nope}}' } });
    expect(unknownVariable.status).toBe(400);
    expect(unknownVariable.body.code).toBe('UNKNOWN_TEMPLATE_VARIABLE');
    expect(unknownVariable.body.fields?.[0]?.field).toBe('template.body');
    expect(unknownVariable.body.error).toContain('{{eta_minuts}}');
    expect(unknownVariable.body.error).toContain('{{nope}}');

    const badTrigger = await acme.as.admin.put<Failure>('/api/eta/notification-config', { ...base, trigger_type: 'when_close' });
    expect(badTrigger.status).toBe(400);
    expect(badTrigger.body.fields?.map((f) => f.field)).toContain('trigger_type');
    const tooFar = await acme.as.admin.put<Failure>('/api/eta/notification-config', { ...base, trigger_type: 'distance_away', trigger_value: 900 });
    expect(tooFar.status).toBe(400);
    expect(tooFar.body.fields?.[0]?.field).toBe('trigger_value');
    const zero = await acme.as.admin.put<Failure>('/api/eta/notification-config', { ...base, trigger_value: 0 });
    expect(zero.body.fields?.map((f) => f.field)).toContain('trigger_value');
    const missing = await acme.as.admin.put<Failure>('/api/eta/notification-config', { trigger_type: 'distance_away', trigger_value: 1, recipient_type: 'driver' });
    expect(missing.body.fields?.map((f) => f.field)).toContain('delivery_method');

    expect((await acme.as.dispatcher.put('/api/eta/notification-config', base)).status).toBe(403);
    expect((await acme.as.customer.get('/api/eta/notification-config')).status).toBe(403);
    expect((await acme.as.admin.get<{ meta: { total: number } }>('/api/eta/notification-config')).body.meta.total).toBe(before);
  });
});
