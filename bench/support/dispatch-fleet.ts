import type { MikroORM } from '@mikro-orm/postgresql';
import type { CommandContext, Engine } from '../../engine/engine.ts';
import { createJob } from '../../engine/jobs/job.service.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import type { EngineSite } from './engine-seed.ts';

/** The dispatch benches' fleet: drivers around Paris, and jobs with one pickup each scattered over the same area. */
export const PARIS = { lat: 48.8566, lng: 2.3522 };

/**
 * N drivers, all in one team, available, with a default vehicle and a position within ~20 km of Paris. `label`
 * names the team, its vehicle and its drivers (the count by default), so a site can hold several such teams.
 */
export async function seedDrivers(orm: MikroORM, site: EngineSite, count: number, label: string = String(count)): Promise<string> {
  const teamId = `team_bench_${label}`;
  const vehicleId = `veh_bench_${label}`;
  await inTenantScope(orm, { siteId: null, platform: true }, async (em) => {
    const now = new Date();
    await em.execute('insert into team (id, site_id, name, is_active, created_at, updated_at) values (?, ?, ?, true, ?, ?)', [teamId, site.siteId, 'Bench team', now, now]);
    await em.execute("insert into vehicle (id, site_id, name, type, is_active, created_at, updated_at) values (?, ?, 'Bench van', 'van', true, ?, ?)", [vehicleId, site.siteId, now, now]);
    const prefix = `usr_b${label}_`;
    await em.execute(
      `insert into app_user (id, email, first_name, last_name, created_at, updated_at)
       select ? || lpad(g::text, 6, '0'), 'driver' || g || '.' || ? || '@bench.example', 'Driver', g::text, now(), now() from generate_series(1, ?) g`,
      [prefix, label, count],
    );
    await em.execute(
      `insert into user_profile (id, site_id, user_id, role, is_active, created_at, updated_at)
       select 'prof_' || u.id, ?, u.id, 'driver', true, now(), now() from app_user u where u.id like ?`,
      [site.siteId, `${prefix}%`],
    );
    await em.execute(
      `insert into worker (site_id, user_id, default_vehicle_id, team_ids, created_at, updated_at)
       select ?, u.id, ?, ?::jsonb, now(), now() from app_user u where u.id like ?`,
      [site.siteId, vehicleId, JSON.stringify([teamId]), `${prefix}%`],
    );
    await em.execute(
      `insert into driver_state (site_id, user_id, availability, version, snapshot, last_lat, last_lng, last_recorded_at, updated_at)
       select ?, u.id, 'available', 1, '{"value": "available"}', ? + (random() - 0.5) * 0.36, ? + (random() - 0.5) * 0.54, now(), now()
       from app_user u where u.id like ?`,
      [site.siteId, PARIS.lat, PARIS.lng, `${prefix}%`],
    );
  });
  // Fresh bulk-loaded tables have no statistics yet (autovacuum would gather them within a minute in production);
  // without them the planner picks nested loops over 10k rows and the bench measures the planner, not dispatch.
  await inTenantScope(orm, { siteId: null, platform: true }, (em) => em.execute('analyze app_user, user_profile, worker, driver_state, vehicle, worker_schedule, job, stop'));
  return teamId;
}

export async function makeJobs(engine: Engine, ctx: CommandContext, site: EngineSite, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const point = { lat: PARIS.lat + (Math.random() - 0.5) * 0.3, lng: PARIS.lng + (Math.random() - 0.5) * 0.45 };
    const job = await engine.command(ctx, `job:new:${i}`, (scope) =>
      createJob(scope, { customer_user_id: site.customerUserId, stops: [{ type: 'pickup', street_address: `${i} Bench Street`, city: 'Paris', point }] }),
    );
    ids.push(job.id);
  }
  return ids;
}
