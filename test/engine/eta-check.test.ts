import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDriverEtas, mappingPolicyOf, type EtaCheckDeps } from '../../engine/eta/eta-check.ts';
import { assertKnownVariables, defaultTemplate, renderTemplate, TEMPLATE_VARIABLES, type TemplateValues } from '../../engine/eta/eta-templates.ts';
import { crossesThreshold } from '../../engine/eta/eta-triggers.ts';
import { estimateStops } from '../../engine/eta/stop-eta.ts';
import { createOfflineProvider } from '../../engine/mapping/offline-provider.ts';
import { DomainError } from '../../engine/domain-error.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture, signIn, type SiteFixture } from '../support/fixtures.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const STOP = { lat: 48.8662, lng: 2.3047 };

let server: TestServer;
let acme: SiteFixture;
let deps: EtaCheckDeps;

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  const { services } = server;
  deps = { orm: services.db.orm, crypto: services.crypto, clock: services.clock, logger: services.logger, mappingPolicy: mappingPolicyOf(services.config) };
});
afterAll(() => server.close());

describe('ETA checks', () => {
  it('concurrent checks of one driver (as from several processes) send a due notification once', async () => {
    const put = await acme.as.admin.put('/api/eta/notification-config', { trigger_type: 'time_before_arrival', trigger_value: 15, recipient_type: 'admin', delivery_method: 'email' });
    expect(put.status).toBe(200);
    const jobStates = await stateIds(acme.as.admin, 'job');
    const job = await createJob(acme.as.dispatcher, { driver_user_id: acme.users.driver.id, stops: [{ type: 'dropoff', street_address: 'Montaigne', city: 'Paris', point: STOP }] });
    expect((await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched })).status).toBe(200);
    const { access_token } = await signIn(server.client('acme'), acme.users.driver.email, acme.users.driver.password);
    const driver = server.client('acme').as({ accessToken: access_token });
    expect((await driver.post('/api/driver/location', { lat: STOP.lat + 0.02, lng: STOP.lng, recorded_at: server.clock.now().toISOString() })).status).toBe(200);

    const results = await Promise.all(Array.from({ length: 5 }, () => checkDriverEtas(deps, acme.site.id, acme.users.driver.id)));
    // The trigger's own queued check may have run first: then none of these send anything. Either way, one message.
    expect(results.flat().length).toBeLessThanOrEqual(1);
    const rows = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
      em.execute<{ n: string }[]>("select count(*) as n from notification_message where recipient = ? and channel = 'email'", [acme.users.admin.email]),
    );
    expect(Number(rows[0]!.n)).toBe(1);
    const sent = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
      em.execute<{ stop_id: string; audited: string }[]>(
        "select s.stop_id, (select count(*) from audit_record a where a.entity_id = s.id and a.entity_type = 'EtaNotificationSent') as audited from eta_notification_sent s",
      ),
    );
    expect(sent).toEqual([{ stop_id: job.stops[0]!.id, audited: '1' }]);
  });
});

describe('ETA thresholds', () => {
  it('a distance trigger does not fire for a stop reached only after waiting for a window (the driver passes by, not for it)', () => {
    const stop = { stopId: 'stp_1', jobId: 'job_1', stopIndex: 0, type: 'pickup', lat: 0, lng: 0, address: '', serviceSeconds: 300, completeAfter: null, routeDayStart: null, customerUserId: null, contactName: null, contactPhone: null };
    const estimate = { stop, arrivalAt: new Date(), completionAt: new Date(), cumulativeDistanceMeters: 500, cumulativeDurationSeconds: 90_000, waitedSeconds: 0, awaitsRouteDay: false };
    const config = { triggerType: 'distance_away', triggerValue: 2 } as const;
    expect(crossesThreshold(config, estimate)).toBe(true);
    expect(crossesThreshold(config, { ...estimate, waitedSeconds: 86_000 })).toBe(false);
  });
  it("no trigger fires for a stop of a route whose day has not begun: at 23:45 midnight is not 'in 15 minutes'", async () => {
    const now = new Date('2026-11-30T23:45:00Z');
    const base = { stopId: 'stp_1', jobId: 'job_1', stopIndex: 0, type: 'pickup', lat: 48.86, lng: 2.35, address: '', serviceSeconds: 300, completeAfter: null, routeDayStart: null, customerUserId: null, contactName: null, contactPhone: null };
    const nextDay = { ...base, routeDayStart: new Date('2026-12-01T00:00:00Z') };
    // The same wait for a window the driver is already at is a real arrival: that notice may go.
    const window = { ...base, stopId: 'stp_2', completeAfter: new Date('2026-12-01T00:00:00Z') };
    const here = { lat: 48.8601, lng: 2.3501 };
    const [dayStop] = await estimateStops(createOfflineProvider(), here, 'car', [nextDay], now);
    const [windowStop] = await estimateStops(createOfflineProvider(), here, 'car', [window], now);
    expect([dayStop!.arrivalAt.toISOString(), dayStop!.awaitsRouteDay]).toEqual(['2026-12-01T00:00:00.000Z', true]);
    expect(windowStop!.awaitsRouteDay).toBe(false);
    const inHalfAnHour = { triggerType: 'time_before_arrival', triggerValue: 30 } as const;
    expect(crossesThreshold(inHalfAnHour, dayStop!)).toBe(false);
    expect(crossesThreshold(inHalfAnHour, windowStop!)).toBe(true);
    // Twenty minutes' drive away: the drive itself crosses midnight, and it is still no notice for tomorrow's route.
    const [farDayStop] = await estimateStops(createOfflineProvider(), { lat: 48.93, lng: 2.35 }, 'car', [nextDay], now);
    expect(farDayStop!.arrivalAt.getTime()).toBeGreaterThan(Date.parse('2026-12-01T00:00:00Z'));
    expect(farDayStop!.cumulativeDurationSeconds).toBeLessThan(30 * 60);
    expect([farDayStop!.awaitsRouteDay, crossesThreshold(inHalfAnHour, farDayStop!)]).toEqual([true, false]);
  });
});

describe('ETA templates', () => {
  const values = Object.fromEntries(TEMPLATE_VARIABLES.map((name) => [name, `<${name}>`])) as TemplateValues;

  it('fills every known variable, with or without spaces inside the braces', () => {
    expect(renderTemplate('{{driver_name}} in {{ eta_minutes }} min at {{eta_time}}', values)).toBe('<driver_name> in <eta_minutes> min at <eta_time>');
    for (const trigger of ['time_before_arrival', 'distance_away'] as const) {
      for (const recipient of ['customer', 'driver', 'admin'] as const) {
        const template = defaultTemplate(trigger, recipient);
        expect(() => assertKnownVariables(template)).not.toThrow();
        expect(renderTemplate(template.body, values)).not.toContain('{{');
      }
    }
  });

  it('refuses unknown variables, naming the field and each variable once', () => {
    let error: unknown;
    try {
      assertKnownVariables({ title: '{{driver_name}}', body: '{{eta}} {{eta}} {{Driver_Name}}' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ status: 400, code: 'UNKNOWN_TEMPLATE_VARIABLE', field: 'template.body', details: { unknown_variables: ['eta', 'Driver_Name'] } });
  });
});
