import { issueSession } from '../../engine/auth/session.service.ts';
import { systemClock } from '../../engine/clock.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { UserSchema } from '../../persistence/entities/user.entity.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import type { SiteFixture } from '../support/fixtures.ts';
import type { ApiClient } from '../support/http-client.ts';
import { createJob, type JobBody } from '../support/job-fixtures.ts';

/** Test helpers for dispatch: drivers with a worker record, a vehicle, a position and an availability. */

export type TestDriver = { id: string; token: string; name: string; client: ApiClient };

export type DriverOptions = {
  name: string;
  at?: { lat: number; lng: number };
  vehicleId?: string | null;
  teamIds?: string[];
  zoneIds?: string[];
  maxLoad?: number;
  availability?: 'available' | 'offline' | 'on_break' | 'busy';
  /** Weekly slots; `[]` means never on schedule. Omitted: no schedule (always on). */
  weekly?: { day_of_week: number; start_time: string; end_time: string }[];
};

type Server = { services: { db: { orm: Parameters<typeof inTenantScope>[0] } }; client(site: string | null): ApiClient };

/**
 * A driver: a worker created through the API (a driver user without password), signed in by a session issued
 * directly, with a default vehicle, a position and an availability as asked. Fast, so a test can make fifty.
 */
export async function createDriver(server: Server, fixture: SiteFixture, options: DriverOptions): Promise<TestDriver> {
  const [first, last] = options.name.split(' ');
  const email = `${options.name.toLowerCase().replaceAll(' ', '.')}.${Math.random().toString(36).slice(2, 8)}@drivers.example`;
  const worker = await fixture.as.admin.post<{ data: { id: string } }>('/api/worker', {
    email,
    first_name: first,
    ...(last ? { last_name: last } : {}),
    ...(options.vehicleId ? { default_vehicle_id: options.vehicleId } : {}),
    ...(options.teamIds ? { team_ids: options.teamIds } : {}),
    ...(options.zoneIds ? { zone_ids: options.zoneIds } : {}),
    ...(options.maxLoad !== undefined ? { max_load: options.maxLoad } : {}),
  });
  if (worker.status !== 201) throw new Error(`worker create failed: ${worker.status} ${worker.text}`);
  const id = worker.body.data.id;
  // A session issued directly: signing in fifty drivers would spend seconds hashing passwords.
  const { accessToken } = await inTenantScope(server.services.db.orm, { siteId: fixture.site.id, userId: id }, async (em) => {
    const user = await em.findOneOrFail(UserSchema, { id });
    const profile = await em.findOneOrFail(UserProfileSchema, { userId: id, role: 'driver' });
    return issueSession(em, { clock: systemClock, accessTtlSeconds: 3600, refreshTtlSeconds: 7200 }, user, profile);
  });
  const client = server.client(fixture.site.subdomain).as({ accessToken });
  if (options.weekly) {
    const schedule = await fixture.as.admin.put('/api/worker/schedule', { worker_id: id, weekly: options.weekly, exceptions: [] });
    if (schedule.status !== 200) throw new Error(`schedule failed: ${schedule.status} ${schedule.text}`);
  }
  if (options.at) {
    const location = await client.post('/api/driver/location', { ...options.at, recorded_at: new Date(Date.now() - 1000).toISOString() });
    if (location.status >= 300) throw new Error(`location failed: ${location.status} ${location.text}`);
  }
  const availability = options.availability ?? 'available';
  if (availability !== 'offline') {
    const status = await client.put('/api/driver/status', { availability: availability === 'busy' || availability === 'on_break' ? 'available' : availability });
    if (status.status !== 200) throw new Error(`status failed: ${status.status} ${status.text}`);
    if (availability !== 'available') await client.put('/api/driver/status', { availability });
  }
  return { id, token: accessToken, name: options.name, client };
}

export async function createVehicle(fixture: SiteFixture, name = 'Van 1'): Promise<string> {
  const response = await fixture.as.admin.post<{ data: { id: string } }>('/api/vehicle', { name, type: 'van' });
  if (response.status !== 201) throw new Error(`vehicle create failed: ${response.text}`);
  return response.body.data.id;
}

export async function createTeam(fixture: SiteFixture, name: string): Promise<string> {
  const response = await fixture.as.admin.post<{ data: { id: string } }>('/api/team', { name });
  if (response.status !== 201) throw new Error(`team create failed: ${response.text}`);
  return response.body.data.id;
}

/** A job whose pickup is at `at` (dropoff a little north), optionally with a time window on the pickup. */
export async function jobAt(client: ApiClient, at: { lat: number; lng: number }, window?: { after: Date; before: Date }): Promise<JobBody> {
  return createJob(client, {
    stops: [
      { type: 'pickup', street_address: '1 Test Street', city: 'Paris', point: at, ...(window ? { complete_after: window.after.toISOString(), complete_before: window.before.toISOString() } : {}) },
      { type: 'dropoff', street_address: '2 Test Street', city: 'Paris', point: { lat: at.lat + 0.01, lng: at.lng } },
    ],
  });
}
