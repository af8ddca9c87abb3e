import * as fc from 'fast-check';
import type { Socket } from 'socket.io-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture, signIn, type SiteFixture } from '../support/fixtures.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait-for.ts';
import { ask, collect, connectSocket, refusalOf } from './socket-client.ts';

type Ack = { data?: { accepted: boolean; reason?: string }; code?: string; fields?: { field: string }[] };
type BatchAck = { data?: { accepted: number; results: { accepted: boolean; reason?: string }[] }; code?: string };
type Positions = { data: { user_id: string; lat: number; lng: number; recorded_at: string }[] };
type Feed = { event: string; entity_id: string; entity_version: number | null; data: Record<string, unknown> };

let server: TestServer;
let acme: SiteFixture;
let globex: SiteFixture;
const open: Socket[] = [];
const driverIds = new Map<string, string>();
let jobStates: Record<string, string>;

async function connect(site: string, namespace: '/driver' | '/dispatch', token: string): Promise<Socket> {
  const socket = await connectSocket(server.port, site, namespace, { token });
  open.push(socket);
  return socket;
}

/** A fix `offsetMs` from now (test clock), around Paris. */
const fix = (offsetMs: number, lat = 48.85, lng = 2.35) => ({ lat, lng, recorded_at: new Date(server.clock.now().getTime() + offsetMs).toISOString() });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  server = await startTestServer({ TRACK_POINT_INTERVAL_SECONDS: '30', TRACK_POINT_DISTANCE_METERS: '200', DRIVER_DISCONNECT_GRACE_SECONDS: '0.5', LOCATION_RATE_LIMIT_PER_SECOND: '20' });
  acme = await createSiteFixture(server, 'acme');
  globex = await createSiteFixture(server, 'globex');
  jobStates = await stateIds(acme.as.admin, 'job');
  for (const site of [acme, globex]) {
    const [row] = await inTenantScope(server.services.db.orm, { siteId: site.site.id }, (em) =>
      em.execute<{ service_user_id: string }[]>(`select service_user_id from application where site_id = ? and role = 'driver'`, [site.site.id]),
    );
    driverIds.set(site.site.id, row!.service_user_id);
  }
});
afterEach(() => {
  for (const socket of open.splice(0)) socket.close();
});
afterAll(() => server.close());

describe('handshake', () => {
  it('accepts the REST credentials: an API key or an access token, in auth.token or an Authorization header', async () => {
    const { access_token } = await signIn(server.client('acme'), acme.users.driver.email, acme.users.driver.password);
    const sockets = [
      await connect('acme', '/driver', acme.keys.driver),
      await connect('acme', '/driver', access_token),
      await connectSocket(server.port, 'acme', '/dispatch', { headers: { authorization: `Bearer ${acme.keys.dispatcher}` } }),
      await connectSocket(server.port, 'acme', '/dispatch', { headers: { 'x-api-key': acme.keys.admin } }),
    ];
    open.push(...sockets);
    expect(sockets.every((socket) => socket.connected)).toBe(true);
    // The session is the signed-in driver's own: their fix lands on their user.
    expect(await ask<Ack>(sockets[1]!, 'location', fix(-5000, 48.1, 2.1))).toEqual({ data: { accepted: true } });
    const own = await acme.as.dispatcher.get<{ data: { lat: number } }>(`/api/driver/location?user_id=${acme.users.driver.id}`);
    expect(own.body.data.lat).toBe(48.1);
  });

  it('refuses a bad or missing token, another site’s credential, and the wrong role for the namespace', async () => {
    expect(await refusalOf(connectSocket(server.port, 'acme', '/driver', { token: 'dsk_not-a-key' }))).toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(await refusalOf(connectSocket(server.port, 'acme', '/driver', { token: 'dat_not-a-token' }))).toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(await refusalOf(connectSocket(server.port, 'acme', '/driver', {}))).toMatchObject({ code: 'MISSING_CREDENTIALS' });
    // A driver of acme presenting their key on globex's host: the credential does not exist there.
    expect(await refusalOf(connectSocket(server.port, 'globex', '/driver', { token: acme.keys.driver }))).toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(await refusalOf(connectSocket(server.port, 'globex', '/dispatch', { token: acme.keys.dispatcher }))).toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(await refusalOf(connectSocket(server.port, 'acme', '/dispatch', { token: acme.keys.driver }))).toMatchObject({ code: 'FORBIDDEN' });
    expect(await refusalOf(connectSocket(server.port, 'acme', '/driver', { token: acme.keys.customer }))).toMatchObject({ code: 'FORBIDDEN' });
    expect(await refusalOf(connectSocket(server.port, 'nosuchsite', '/driver', { token: acme.keys.driver }))).toMatchObject({ code: 'SITE_NOT_FOUND' });
  });

  it('refuses two different credentials in one handshake, as REST does, rather than acting as either', async () => {
    const both = { token: acme.keys.driver, headers: { 'x-api-key': acme.keys.admin } };
    expect(await refusalOf(connectSocket(server.port, 'acme', '/driver', both))).toMatchObject({ code: 'AMBIGUOUS_CREDENTIALS' });
    // The same token twice (auth and the Authorization header) is one credential.
    const twice = await connectSocket(server.port, 'acme', '/driver', { token: acme.keys.driver, headers: { authorization: `Bearer ${acme.keys.driver}` } });
    expect(twice.connected).toBe(true);
    twice.close();
  });
});

describe('locations', () => {
  it('acknowledges a fix after applying it, shows it to the site’s dispatchers only, and serves it over REST', async () => {
    const acmeDispatch = await connect('acme', '/dispatch', acme.keys.dispatcher);
    const globexDispatch = await connect('globex', '/dispatch', globex.keys.dispatcher);
    const acmeSeen = collect<Positions>(acmeDispatch, 'driver:locations');
    const globexSeen = collect<Positions>(globexDispatch, 'driver:locations');
    const driver = await connect('acme', '/driver', acme.keys.driver);
    const sent = { ...fix(0, 48.8566, 2.3522), heading: 90, speed: 12.5, accuracy: 4 };
    expect(await ask<Ack>(driver, 'location', sent)).toEqual({ data: { accepted: true } });

    const location = await acme.as.dispatcher.get<{ data: Record<string, unknown> }>(`/api/driver/location?user_id=${driverId(acme)}`);
    expect(location.body.data).toMatchObject({ lat: 48.8566, lng: 2.3522, heading: 90, speed: 12.5, accuracy: 4, recorded_at: sent.recorded_at });
    // Wait for this fix, not any message: a position an earlier test sent can still reach the new socket first.
    await waitFor('this fix at acme dispatch', () => acmeSeen.flatMap((m) => m.data).some((p) => p.recorded_at === sent.recorded_at));
    expect(acmeSeen.flatMap((m) => m.data)).toContainEqual(expect.objectContaining({ user_id: driverId(acme), lat: 48.8566, recorded_at: sent.recorded_at }));
    await pause(200);
    expect(globexSeen).toEqual([]);
  });

  it('keeps the newest fix as the position, stores late fixes as history under the throttle, and ignores exact repeats', async () => {
    const driver = await connect('acme', '/driver', acme.keys.driver);
    const base = 60 * 60_000; // an hour ahead of the first test's fixes, behind the skew limit once the clock moves
    server.clock.advance(2 * 60 * 60);
    const newest = fix(-base + 120_000, 48.87, 2.36);
    expect(await ask<Ack>(driver, 'location', newest)).toEqual({ data: { accepted: true } });
    // Older than the applied one: not the position, but history (far enough in time from the stored point).
    expect(await ask<Ack>(driver, 'location', fix(-base, 48.86, 2.34))).toEqual({ data: { accepted: false, reason: 'stale' } });
    expect(await ask<Ack>(driver, 'location', newest)).toEqual({ data: { accepted: false, reason: 'duplicate' } });
    // 5 s after the newest and 10 m away: applied as the position, but too close to store.
    expect(await ask<Ack>(driver, 'location', fix(-base + 125_000, 48.87009, 2.36))).toEqual({ data: { accepted: true } });
    // 10 s after, 1 km away: stored (the distance rule).
    expect(await ask<Ack>(driver, 'location', fix(-base + 130_000, 48.879, 2.36))).toEqual({ data: { accepted: true } });

    const from = new Date(server.clock.now().getTime() - base - 1000).toISOString();
    const track = await acme.as.dispatcher.get<{ data: { lat: number; recorded_at: string }[] }>(`/api/driver/track?driver_user_id=${driverId(acme)}&from=${from}`);
    expect(track.status).toBe(200);
    expect(track.body.data.map((p) => p.lat)).toEqual([48.86, 48.87, 48.879]);
    const location = await acme.as.driver.get<{ data: { lat: number } }>('/api/driver/location');
    expect(location.body.data.lat).toBe(48.879);
  });

  it('applies an offline backlog in order with one verdict per fix', async () => {
    server.clock.advance(60 * 60);
    const driver = await connect('acme', '/driver', acme.keys.driver);
    const now = server.clock.now().getTime();
    const at = (offsetMs: number, lat: number) => ({ lat, lng: 2.35, recorded_at: new Date(now + offsetMs).toISOString() });
    const backlog = [at(-90_000, 48.8), at(-60_000, 48.81), at(-60_000, 48.81), at(-120_000, 48.79)];
    const reply = await ask<BatchAck>(driver, 'locations', backlog);
    expect(reply.data).toEqual({
      accepted: 2,
      results: [{ accepted: true }, { accepted: true }, { accepted: false, reason: 'duplicate' }, { accepted: false, reason: 'stale' }],
    });
  });

  it('applies a full offline backlog across several statements: verdicts see the fixes committed before them', async () => {
    server.clock.advance(60 * 60);
    const driver = await connect('acme', '/driver', acme.keys.driver);
    const now = server.clock.now().getTime();
    const at = (i: number) => ({ lat: 48.8 + i * 0.0001, lng: 2.35, recorded_at: new Date(now - 600_000 + i * 1000).toISOString() });
    const backlog = Array.from({ length: 500 }, (_, i) => at(i));
    backlog[250] = at(249); // an exact repeat of the fix before it, which a statement before this one applied
    backlog[400] = { ...at(10), lat: 48.9 }; // older than the fixes applied before it
    const reply = await ask<BatchAck>(driver, 'locations', backlog);
    const expected = backlog.map((_, i) => (i === 250 ? { accepted: false, reason: 'duplicate' } : i === 400 ? { accepted: false, reason: 'stale' } : { accepted: true }));
    expect(reply.data).toEqual({ accepted: 498, results: expected });
    const location = await acme.as.driver.get<{ data: { lat: number; recorded_at: string } }>('/api/driver/location');
    expect(location.body.data).toMatchObject({ lat: at(499).lat, recorded_at: at(499).recorded_at });
  });

  it('answers a malformed fix with an error ack naming the field, and a fix from the future with INVALID_RECORDED_AT', async () => {
    const driver = await connect('acme', '/driver', acme.keys.driver);
    const bad = await ask<Ack>(driver, 'location', { lat: 123, lng: 2, recorded_at: new Date().toISOString() });
    expect(bad).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ field: 'lat' }] });
    expect(await ask<Ack>(driver, 'location', { ...fix(0), site_id: globex.site.id })).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ field: 'site_id' }] });
    expect(await ask<Ack>(driver, 'location', fix(10 * 60_000))).toMatchObject({ code: 'INVALID_RECORDED_AT' });
    expect(await ask<BatchAck>(driver, 'locations', [])).toMatchObject({ code: 'VALIDATION_FAILED' });
    // A leap second is valid RFC 3339 but no JavaScript time: refused as any such date-time, never a server error.
    const leap = { lat: 48.85, lng: 2.35, recorded_at: '2016-12-31T23:59:60Z' };
    expect(await ask<BatchAck>(driver, 'locations', [fix(-1000), leap])).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ field: '1.recorded_at' }] });
    expect(await ask<BatchAck>(driver, 'locations', [leap])).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ field: '0.recorded_at' }] });
    expect(await ask<Ack>(driver, 'location', leap)).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ field: 'recorded_at' }] });
    const { access_token } = await signIn(server.client('acme'), acme.users.driver.email, acme.users.driver.password);
    const rest = await server.client('acme').as({ accessToken: access_token }).post('/api/driver/location', leap);
    expect(rest.status).toBe(400);
    expect(rest.body).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ field: 'recorded_at' }] });
    // Year 0000 parses in JavaScript but has no timestamptz: the date-time format refuses it (years 0001-9999), as it
    // refuses a leap second: the batch is refused naming it, never written half or failed in the database.
    const yearZero = { lat: 48.85, lng: 2.35, recorded_at: '0000-01-01T00:00:00Z' };
    expect(await ask<BatchAck>(driver, 'locations', [fix(-500), yearZero])).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ field: '1.recorded_at' }] });
    expect(await ask<Ack>(driver, 'location', fix(0))).toMatchObject({ data: { accepted: true } });
  });

  it('survives fuzzed payloads on both events and still serves the driver afterwards', async () => {
    const driver = await connect('acme', '/driver', acme.keys.driver);
    const payload = fc.oneof(
      fc.anything(),
      fc.record({ lat: fc.oneof(fc.double(), fc.string()), lng: fc.double(), recorded_at: fc.oneof(fc.string(), fc.date({ noInvalidDate: true }).map((d) => d.toISOString())) }, { requiredKeys: [] }),
      fc.array(fc.record({ lat: fc.double({ min: -90, max: 90, noNaN: true }), lng: fc.double({ min: -180, max: 180, noNaN: true }), recorded_at: fc.date({ min: new Date(0), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()) }), { maxLength: 5 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('location', 'locations'), payload, async (event, body) => {
        const reply = await ask<Ack>(driver, event, body);
        // Every reply is a verdict or a client error, never a server failure.
        expect(reply.data !== undefined || (typeof reply.code === 'string' && reply.code !== 'INTERNAL_ERROR')).toBe(true);
        await pause(55); // stay under the per-driver quota (20 events/s here)
      }),
      { numRuns: 80 },
    );
    expect(driver.connected).toBe(true);
    expect(await ask<Ack>(driver, 'location', fix(0, 48.9, 2.4))).toMatchObject({ data: { accepted: expect.any(Boolean) } });
  }, 60_000);

  it('rate-limits a flooding driver with an error event and error acks, without dropping the connection', async () => {
    const driver = await connect('acme', '/driver', acme.keys.driver);
    const errors = collect<{ code: string }>(driver, 'error');
    const replies = await Promise.all(Array.from({ length: 60 }, (_, i) => ask<Ack>(driver, 'location', fix(-i * 1000 - 500_000))));
    expect(replies.filter((r) => r.code === 'RATE_LIMITED').length).toBeGreaterThanOrEqual(30);
    await waitFor('an error event', () => errors.length > 0);
    expect(errors[0]).toMatchObject({ code: 'RATE_LIMITED' });
    await pause(1100);
    expect(driver.connected).toBe(true);
    expect((await ask<Ack>(driver, 'location', fix(0, 48.91, 2.4))).data).toBeDefined();
  });
});

describe('live feed and presence', () => {
  it('sends committed job events to the site’s dispatch room and to the assigned driver, in version order', async () => {
    const acmeDispatch = await connect('acme', '/dispatch', acme.keys.dispatcher);
    const globexDispatch = await connect('globex', '/dispatch', globex.keys.dispatcher);
    const driver = await connect('acme', '/driver', acme.keys.driver);
    const otherDriver = await connect('globex', '/driver', globex.keys.driver);
    const dispatchFeed = collect<Feed>(acmeDispatch, 'feed');
    const driverFeed = collect<Feed>(driver, 'feed');
    const globexFeeds = [...collect<Feed>(globexDispatch, 'feed'), ...collect<Feed>(otherDriver, 'feed')];
    const mine = await createJob(acme.as.dispatcher, {
      driver_user_id: driverId(acme),
      internal_notes: 'staff only: gate code',
      stops: [{ type: 'pickup', street_address: '1 Rue A', city: 'Paris', point: { lat: 48.85, lng: 2.35 }, internal_notes: 'staff only: back door' }, { type: 'dropoff', street_address: '2 Rue B', city: 'Paris', point: { lat: 48.86, lng: 2.34 } }],
    });
    const unassigned = await createJob(acme.as.dispatcher);
    const moved = await acme.as.dispatcher.post('/api/job/state', { job_id: mine.id, workflow_state_id: jobStates.dispatched });
    expect(moved.status).toBe(200);
    await waitFor('both jobs in the feeds', () => dispatchFeed.some((e) => e.entity_id === unassigned.id) && driverFeed.filter((e) => e.entity_id === mine.id).length >= 2);
    expect(dispatchFeed.find((e) => e.entity_id === mine.id)).toMatchObject({ event: 'job:create', data: { driver_user_id: driverId(acme) } });
    expect(driverFeed.filter((e) => e.entity_id === mine.id).map((e) => e.event)).toEqual(['job:create', 'job:state_change']);
    expect(driverFeed.map((e) => e.entity_id)).not.toContain(unassigned.id);
    // The staff's notes reach the dispatch room, never the driver (as the REST answers leave them out for drivers).
    expect(JSON.stringify(dispatchFeed.filter((e) => e.entity_id === mine.id))).toContain('staff only');
    expect(JSON.stringify(driverFeed)).not.toContain('staff only');
    const versions = dispatchFeed.filter((e) => e.entity_id === mine.id).map((e) => e.entity_version ?? 0);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    await pause(300);
    expect(globexFeeds).toEqual([]);
  });

  it('tells a driver when a job is taken from them (returned to unassigned): the event names them as previous_driver_user_id', async () => {
    const driver = await connect('acme', '/driver', acme.keys.driver);
    const driverFeed = collect<Feed>(driver, 'feed');
    const job = await createJob(acme.as.dispatcher, { driver_user_id: driverId(acme) });
    expect((await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched })).status).toBe(200);
    expect((await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.created })).status).toBe(200);
    await waitFor('the return in the driver\'s feed', () => driverFeed.some((e) => e.entity_id === job.id && e.data.previous_phase === 'assigned'));
    const returned = driverFeed.find((e) => e.entity_id === job.id && e.data.previous_phase === 'assigned')!;
    expect(returned.data).toMatchObject({ driver_user_id: null, previous_driver_user_id: driverId(acme), phase: 'unassigned' });
    for (const socket of open.splice(0)) socket.close();
  });

  it("sends the driver their job's stop moves, cascaded or made by a dispatcher on one stop, naming them; not another driver's", async () => {
    const driver = await connect('acme', '/driver', acme.keys.driver);
    const driverFeed = collect<Feed>(driver, 'feed');
    const stopStates = await stateIds(acme.as.admin, 'stop');
    const job = await createJob(acme.as.dispatcher, { driver_user_id: driverId(acme) });
    const unassigned = await createJob(acme.as.dispatcher);
    expect((await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched })).status).toBe(200);
    const [pickup, dropoff] = job.stops.map((s) => s.id);
    await waitFor('the cascaded stop moves', () => driverFeed.filter((e) => e.event === 'stop:state_change').length >= 2);
    expect((await acme.as.dispatcher.post('/api/stop/state', { stop_id: pickup, workflow_state_id: stopStates.en_route })).status).toBe(200);
    await waitFor("the dispatcher's stop move", () => driverFeed.filter((e) => e.entity_id === pickup).length >= 2);
    const stopEvents = driverFeed.filter((e) => e.event === 'stop:state_change');
    expect(new Set(stopEvents.map((e) => e.entity_id))).toEqual(new Set([pickup, dropoff]));
    expect(stopEvents.every((e) => e.data.driver_user_id === driverId(acme) && e.data.job_id === job.id)).toBe(true);
    // The unassigned job's stops never moved; its creation went to the dispatch room only.
    expect(driverFeed.map((e) => e.entity_id)).not.toContain(unassigned.id);
    for (const socket of open.splice(0)) socket.close();
  });

  it('takes a disconnected driver offline after the grace period, but not one who reconnected in time', async () => {
    await pause(700); // the previous test's sockets closed: let their grace run out first
    expect((await acme.as.driver.put('/api/driver/status', { availability: 'available' })).status).toBe(200);
    const first = await connect('acme', '/driver', acme.keys.driver);
    first.close();
    await pause(100);
    await connect('acme', '/driver', acme.keys.driver); // back within the 0.5 s grace
    await pause(1000);
    expect((await acme.as.driver.get<{ data: { availability: string } }>('/api/driver/location')).body.data.availability).toBe('available');
    for (const socket of open.splice(0)) socket.close();
    await waitFor('the driver offline', async () => (await acme.as.driver.get<{ data: { availability: string } }>('/api/driver/location')).body.data.availability === 'offline', 5000);
    const audit = await acme.as.admin.get<{ data: { request_id: string | null }[] }>(`/api/audit/search?entity_id=${driverId(acme)}&action=status_change`);
    expect(audit.body.data.some((r) => r.request_id === 'socket-disconnect')).toBe(true);
  });
});

/** The API-key driver of a fixture is its service account: the user the socket acts as. */
function driverId(site: SiteFixture): string {
  return driverIds.get(site.site.id)!;
}
