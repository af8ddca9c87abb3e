import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { loadConfig } from '../app/config.ts';
import { createServices, type Services } from '../app/services.ts';
import { createApplication } from '../engine/admin/application.service.ts';
import { createOrganization } from '../engine/admin/organization.service.ts';
import { createSite } from '../engine/admin/site.service.ts';
import { createHttpApp } from '../http/app.ts';
import { ALL_OPERATIONS } from '../http/operations/all-operations.ts';
import { issueSiteSessions } from '../engine/auth/session.service.ts';
import { UserProfileSchema } from '../persistence/entities/user-profile.entity.ts';
import { UserSchema } from '../persistence/entities/user.entity.ts';
import { inTenantScope } from '../persistence/tenant-scope.ts';
import { analyzeAsJobsDouble } from './planner-upkeep.ts';
import type { Timeline } from './run-context.ts';
import type { SimDatabases } from './sim-database.ts';
import { SessionCredential, SiteApi } from './site-api.ts';
import type { SignInDrivers } from './setup-fleet.ts';
import { inMemoryTransport } from './transport.ts';
import { VirtualClock } from './virtual-clock.ts';

export type InProcessSite = {
  api: SiteApi;
  timeline: Timeline;
  services: Services;
  signIn: SignInDrivers;
  /** The database's upkeep as the day's jobs are created (sim/planner-upkeep.ts). */
  afterJobCreated: () => Promise<void>;
  close(): Promise<void>;
};

const SYSTEM = { userId: null, applicationId: null, requestId: 'simulator' };
const SUBDOMAIN = 'sim';

/**
 * A private instance of the whole server for one run: a fresh database, the real services with a virtual clock,
 * the real h3 application called in memory, and one site with an administrator key. No Redis (the table queue),
 * and the outbox relay is stopped: a simulation must never send webhooks to anyone's endpoints.
 */
export async function startInProcessSite(databases: SimDatabases, dayStart: Date, onLog?: (line: string) => void): Promise<InProcessSite> {
  const database = await databases.fresh();
  const config = loadConfig({
    NODE_ENV: 'production',
    DATABASE_URL: database.url,
    DATABASE_POOL_SIZE: '4',
    SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'warn',
    SEED_DEMO: 'false',
    BASE_DOMAIN: 'sim.invalid',
    RATE_LIMIT_POINTS: String(1_000_000_000),
    // Runs can span days of virtual time; drivers' apps refresh their sessions like real ones when this runs out.
    ACCESS_TOKEN_TTL_SECONDS: '86400',
  });
  const clock = new VirtualClock(dayStart);
  const logDestination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      onLog?.(chunk.toString('utf8'));
      done();
    },
  });
  const services = await createServices(config, { clock, logDestination });
  await services.outboxRelay.stop();
  const orm = services.db.orm;
  const site = await inTenantScope(orm, { siteId: null, platform: true }, async (em) => {
    const organization = await createOrganization(em, SYSTEM, { name: 'Simulation' });
    return createSite(em, SYSTEM, { name: 'Simulation', organization_id: organization.id, subdomain: SUBDOMAIN });
  });
  const { apiKey } = await inTenantScope(orm, { siteId: site.id }, (em) => createApplication(em, SYSTEM, site.id, { name: 'simulator office', role: 'admin' }));
  const app = createHttpApp(services, ALL_OPERATIONS);
  const api = new SiteApi(inMemoryTransport(app, `${SUBDOMAIN}.${config.baseDomain}`), apiKey);
  const startMs = dayStart.getTime();
  const timeline: Timeline = {
    advanceTo: async (t) => clock.set(startMs + t * 1000),
    stamp: (t) => new Date(startMs + t * 1000).toISOString(),
    reportPosition: async (member, point, t) => {
      await api.call('POST', '/api/driver/location', { lat: point.lat, lng: point.lng, recorded_at: timeline.stamp(t) }, member.credential);
    },
  };
  // The sessions sign-ins would give, without hashing a password per driver (setup, not the behaviour under test).
  const signIn: SignInDrivers = async (_api, drivers) => {
    const sessions = await inTenantScope(orm, { siteId: site.id }, async (em) => {
      const userIds = drivers.map((driver) => driver.userId);
      const users = new Map((await em.find(UserSchema, { id: { $in: userIds } })).map((user) => [user.id, user]));
      const profiles = new Map((await em.find(UserProfileSchema, { userId: { $in: userIds }, siteId: site.id, role: 'driver' })).map((profile) => [profile.userId, profile]));
      const holders = userIds.map((id) => ({ user: users.get(id)!, profile: profiles.get(id)! }));
      return issueSiteSessions(em, { clock, accessTtlSeconds: config.accessTokenTtlSeconds, refreshTtlSeconds: config.refreshTokenTtlSeconds }, site.id, holders);
    });
    return sessions.map((session) => new SessionCredential(session.accessToken, session.refreshToken));
  };
  return {
    api,
    timeline,
    services,
    signIn,
    afterJobCreated: analyzeAsJobsDouble((sql) => orm.em.fork().execute(sql)),
    async close() {
      await services.close();
      await database.drop();
    },
  };
}
