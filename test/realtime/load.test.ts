import type { Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApplication } from '../../engine/admin/application.service.ts';
import { metersBetween } from '../../engine/drivers/driver-track.ts';
import { ApplicationSchema } from '../../persistence/entities/application.entity.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait-for.ts';
import { ask, collect, connectSocket } from './socket-client.ts';

const DRIVERS = 200;
const SECONDS = 10;
const PERIOD_MS = 500; // 2 Hz: twice a real app's rate, so 4,000 fixes in the run
const THROTTLE = { intervalSeconds: 3, distanceMeters: 50 };

type Ack = { data?: { accepted: boolean }; code?: string };
type Positions = { data: { user_id: string; recorded_at: string }[] };
type Driver = { userId: string; socket: Socket; acked: { lat: number; lng: number; recorded_at: string }[]; refused: number; malformed: number };

const key = (userId: string, recordedAt: string) => `${userId}@${recordedAt}`;

let server: TestServer;
let acme: SiteFixture;
const drivers: Driver[] = [];

beforeAll(async () => {
  server = await startTestServer({
    TRACK_POINT_INTERVAL_SECONDS: String(THROTTLE.intervalSeconds),
    TRACK_POINT_DISTANCE_METERS: String(THROTTLE.distanceMeters),
    LOCATION_RATE_LIMIT_PER_SECOND: '10',
    LOG_LEVEL: 'warn',
  });
  acme = await createSiteFixture(server, 'acme');
  const actor = { userId: null, applicationId: null, requestId: 'load-fixture' };
  const keys = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, async (em) => {
    const created = [];
    for (let i = 0; i < DRIVERS; i += 1) created.push(await createApplication(em, actor, acme.site.id, { name: `driver app ${i}`, role: 'driver' }));
    return created;
  });
  const userOf = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, async (em) => {
    const apps = await em.find(ApplicationSchema, { role: 'driver' });
    return new Map(apps.map((app) => [app.id, app.serviceUserId]));
  });
  for (const { application, apiKey } of keys) {
    const socket = await connectSocket(server.port, 'acme', '/driver', { token: apiKey });
    drivers.push({ userId: userOf.get(application.id)!, socket, acked: [], refused: 0, malformed: 0 });
  }
}, 120_000);
afterAll(async () => {
  for (const driver of drivers) driver.socket.close();
  await server.close();
});

describe('200 drivers streaming for 10 s', () => {
  it('applies every acknowledged fix, shows each to dispatch, stores a throttled track and shrugs off malformed payloads', async () => {
    const dispatcher = await connectSocket(server.port, 'acme', '/dispatch', { token: acme.keys.dispatcher });
    const seen = collect<Positions>(dispatcher, 'driver:locations');
    await Promise.all(
      drivers.map(async (driver, d) => {
        await new Promise((resolve) => setTimeout(resolve, (d * PERIOD_MS) / DRIVERS)); // spread the drivers over the period
        const replies: Promise<void>[] = [];
        // An open loop: the same number of fixes whatever the latency (20 per driver, every 7th one garbage).
        for (let tick = 0; tick < (SECONDS * 1000) / PERIOD_MS; tick += 1) {
          // Every driver drives north at ~15 m/s from its own start.
          const fix = { lat: 48 + d * 0.01 + tick * 0.00007, lng: 2 + d * 0.001, speed: 15, recorded_at: new Date().toISOString() };
          const garbage = tick % 7 === 3;
          replies.push(
            ask<Ack>(driver.socket, 'location', garbage ? { ...fix, lat: 'north' } : fix, 60_000).then((reply) => {
              if (garbage) driver.malformed += reply.code === 'VALIDATION_FAILED' ? 1 : 0;
              else if (reply.data?.accepted) driver.acked.push(fix);
              else driver.refused += 1;
            }),
          );
          await new Promise((resolve) => setTimeout(resolve, PERIOD_MS));
        }
        await Promise.all(replies);
      }),
    );
    const acked = drivers.reduce((sum, d) => sum + d.acked.length, 0);
    // Every valid fix was acknowledged as applied (each driver's fixes are newer one after the other), every bad one refused.
    expect(acked).toBe(drivers.length * 17);
    expect(drivers.every((d) => d.refused === 0 && d.malformed === 3)).toBe(true);

    // Applied: each driver's position is their last acknowledged fix.
    const rows = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
      em.execute<{ user_id: string; last_lat: number; last_recorded_at: Date }[]>('select user_id, last_lat, last_recorded_at from driver_state where site_id = ?', [acme.site.id]),
    );
    const positions = new Map(rows.map((row) => [row.user_id, row]));
    for (const driver of drivers) {
      const last = driver.acked.at(-1)!;
      expect(positions.get(driver.userId)).toMatchObject({ last_lat: last.lat });
      expect(new Date(positions.get(driver.userId)!.last_recorded_at).toISOString()).toBe(last.recorded_at);
    }

    // Broadcast: dispatch saw every acknowledged fix.
    await waitFor('every acknowledged fix at dispatch', () => seen.reduce((sum, m) => sum + m.data.length, 0) >= acked, 10_000);
    const received = new Set(seen.flatMap((m) => m.data.map((p) => key(p.user_id, p.recorded_at))));
    for (const driver of drivers) for (const fix of driver.acked) expect(received.has(key(driver.userId, fix.recorded_at))).toBe(true);

    // Stored: far fewer rows than fixes, and no two stored points of a driver closer than the throttle allows.
    const points = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
      em.execute<{ user_id: string; lat: number; lng: number; recorded_at: Date }[]>('select user_id, lat, lng, recorded_at from track_point where site_id = ? order by user_id, recorded_at', [acme.site.id]),
    );
    expect(points.length).toBeGreaterThanOrEqual(DRIVERS * 2);
    expect(points.length).toBeLessThan(acked / 3);
    for (let i = 1; i < points.length; i += 1) {
      const [a, b] = [points[i - 1]!, points[i]!];
      if (a.user_id !== b.user_id) continue;
      const apart = new Date(b.recorded_at).getTime() - new Date(a.recorded_at).getTime() >= THROTTLE.intervalSeconds * 1000 || metersBetween(a, b) >= THROTTLE.distanceMeters;
      expect(apart).toBe(true);
    }
    dispatcher.close();
  }, 90_000);
});
