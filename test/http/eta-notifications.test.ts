import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ETA_QUEUE } from '../../engine/eta/eta-check.ts';
import { etaCheckJobId, etaWindowOf } from '../../engine/eta/eta-trigger.ts';
import { driveTo as driveAndCheck, newEtaDriver, outbox as siteOutbox, type EtaDriverFixture, type SentMessage } from '../support/eta-fixtures.ts';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/** The stop everyone drives to: 5 Avenue Montaigne. Positions are north of it, `km` straight-line kilometres away. */
const STOP = { lat: 48.8662, lng: 2.3047 };
const north = (km: number) => ({ lat: STOP.lat + km / 111.195, lng: STOP.lng });

let server: TestServer;
let acme: SiteFixture;
let jobStates: Record<string, string>;

type One<T> = { data: T };
type Driver = EtaDriverFixture;

const newDriver = (email: string): Promise<Driver> => newEtaDriver(server, acme, 'acme', { email, first_name: 'Dana', last_name: 'Driver' });
const driveTo = (driver: Driver, at: { lat: number; lng: number }): Promise<void> => driveAndCheck(server, acme, driver, at);
const outbox = (channel: string, recipient: string): Promise<SentMessage[]> => siteOutbox(acme, channel, recipient);

/** A one-stop job of the fixture customer, dispatched to the driver. */
async function dispatchedJob(driver: Driver): Promise<string> {
  const job = await createJob(acme.as.dispatcher, {
    customer_email: undefined,
    customer_user_id: acme.users.customer.id,
    driver_user_id: driver.id,
    stops: [{ type: 'dropoff', street_address: '5 Avenue Montaigne', city: 'Paris', point: STOP }],
  });
  expect((await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched })).status).toBe(200);
  return job.id;
}

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  jobStates = await stateIds(acme.as.admin, 'job');
});
afterAll(() => server.close());

describe('ETA notifications', () => {
  it('a driver approaching a stop triggers a time_before_arrival notification exactly once, and not again inside the debounce window', async () => {
    const config = { trigger_type: 'time_before_arrival', trigger_value: 10, recipient_type: 'customer', delivery_method: 'email', debounce_seconds: 600 };
    expect((await acme.as.admin.put('/api/eta/notification-config', config)).status).toBe(200);
    const driver = await newDriver('approach@acme.example');
    const jobId = await dispatchedJob(driver);
    const customer = acme.users.customer.email;

    // 20 km out (about 39 minutes by the offline car profile): nothing yet.
    await driveTo(driver, north(20));
    expect(await outbox('email', customer)).toHaveLength(0);

    // 3 km out: about 6 minutes, inside the 10-minute threshold.
    await driveTo(driver, north(3));
    const [sent, ...more] = await outbox('email', customer);
    expect(more).toHaveLength(0);
    expect(sent).toMatchObject({ subject: 'Your driver is on the way', status: 'sent' });
    expect(sent!.body).toContain('Dana Driver will arrive at');
    expect(sent!.body).toContain('in about 6 minutes');

    // Closer still: the same stop and threshold never fire twice.
    await driveTo(driver, north(2));
    expect(await outbox('email', customer)).toHaveLength(1);
    const eta = await acme.as.admin.get<One<{ stops: { cumulative_duration_seconds: number }[] }>>(`/api/eta/job?id=${jobId}`);
    expect(eta.body.data.stops[0]!.cumulative_duration_seconds).toBeLessThan(300);

    // A second, tighter threshold for the same customer by push: due now, but the customer heard about this stop
    // less than debounce_seconds ago, so it waits...
    const push = { ...config, trigger_value: 5, delivery_method: 'push', debounce_seconds: 600 };
    expect((await acme.as.admin.put('/api/eta/notification-config', push)).status).toBe(200);
    await driveTo(driver, north(1.5));
    expect(await outbox('push', acme.users.customer.id)).toHaveLength(0);
    server.clock.advance(300);
    await driveTo(driver, north(1.2));
    expect(await outbox('push', acme.users.customer.id)).toHaveLength(0);

    // ...until the window has passed, and then it fires once.
    server.clock.advance(300);
    await driveTo(driver, north(1));
    expect(await outbox('push', acme.users.customer.id)).toHaveLength(1);
    await driveTo(driver, north(0.5));
    expect(await outbox('push', acme.users.customer.id)).toHaveLength(1);
    expect(await outbox('email', customer)).toHaveLength(1);
  });

  it('a distance_away notification fires once when the driver comes within the distance, and not again', async () => {
    const config = { trigger_type: 'distance_away', trigger_value: 1, recipient_type: 'driver', delivery_method: 'email', debounce_seconds: 120 };
    expect((await acme.as.admin.put('/api/eta/notification-config', config)).status).toBe(200);
    const driver = await newDriver('nearby@acme.example');
    await dispatchedJob(driver);

    // 2 km straight is 2.6 km by the offline detour factor: over a mile.
    await driveTo(driver, north(2));
    expect(await outbox('email', driver.email)).toHaveLength(0);
    // 1 km straight, 1.3 km by road: within a mile.
    await driveTo(driver, north(1));
    const sent = await outbox('email', driver.email);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.subject).toBe('0.8 mi from the stop');
    await driveTo(driver, north(0.5));
    server.clock.advance(600);
    await driveTo(driver, north(0.2));
    expect(await outbox('email', driver.email)).toHaveLength(1);
  });

  it('nothing is queued or sent for a driver with no open job', async () => {
    const driver = await newDriver('idle@acme.example');
    server.clock.advance(20);
    const window = etaWindowOf(server.clock.now());
    expect((await driver.client.post('/api/driver/location', { ...north(0.1), recorded_at: server.clock.now().toISOString() })).status).toBe(200);
    // The trigger runs after the answer: give it a moment, then check that it queued nothing.
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const candidate of [window, window + 1]) {
      expect(await server.services.queue.getJob(ETA_QUEUE, etaCheckJobId(acme.site.id, driver.id, candidate))).toBeNull();
    }
    expect(await outbox('email', driver.email)).toHaveLength(0);
    expect(server.logs.filter((line) => line.includes('eta trigger failed'))).toEqual([]);
  });
});
