import { Migration } from '@mikro-orm/migrations';

/**
 * Routes (DESIGN §2): a persisted actor like jobs and stops (workflow state, phase, version, XState snapshot), one
 * driver's and vehicle's day of work, and `route_stop`, the route's stop order. A job belongs to one route at a
 * time (`job.route_id`); its stops are listed in `route_stop` with a position, so reordering a route rewrites
 * positions only, never the stops' own rows and versions. Positions may have gaps: the API numbers them 1..n.
 * `service_date` is a plain `YYYY-MM-DD` text (no time zone games); ISO dates compare correctly as text.
 */
export class Routes0009 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table route (
  id text primary key, site_id text not null references site(id) deferrable initially deferred, name text not null,
  workflow_id text not null references workflow(id) deferrable initially deferred, workflow_state_id text not null,
  phase text not null, version integer not null default 1, snapshot jsonb not null,
  driver_user_id text references app_user(id) deferrable initially deferred, vehicle_id text, team_id text,
  service_date text not null check (service_date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
  cancellation_notes text, created_by_user_id text, started_at timestamptz, completed_at timestamptz,
  created_at timestamptz not null, updated_at timestamptz not null);
create index route_site_date_idx on route (site_id, service_date);
create index route_site_driver_idx on route (site_id, driver_user_id, service_date);
create index route_site_created_idx on route (site_id, created_at);

create table route_stop (
  stop_id text primary key references stop(id) on delete cascade deferrable initially deferred,
  site_id text not null references site(id) deferrable initially deferred,
  route_id text not null references route(id) on delete cascade deferrable initially deferred,
  job_id text not null references job(id) deferrable initially deferred,
  position integer not null,
  unique (route_id, position) deferrable initially deferred);
create index route_stop_job_idx on route_stop (job_id);
create index job_site_route_idx on job (site_id, route_id) where route_id is not null;
`);
    for (const table of ['route', 'route_stop']) {
      this.addSql(`alter table ${table} enable row level security; alter table ${table} force row level security;
        create policy ${table}_tenant on ${table} using (site_id = app_site() or app_is_platform());`);
    }
  }
}
