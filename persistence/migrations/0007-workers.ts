import { Migration } from '@mikro-orm/migrations';

/**
 * Workers (a driver user's dispatch details on one site) and their weekly schedules, tenant tables under RLS.
 * Vehicles, teams and zones are referred to by id without foreign keys: their lifecycle (deletion, deactivation)
 * belongs to the fleet module, and the engine checks the ids exist when a worker is written.
 * A schedule is one row of JSON (weekly slots and dated exceptions) since it is always read and replaced whole.
 */
export class Workers0007 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table worker (
  site_id text not null references site(id) deferrable initially deferred,
  user_id text not null references app_user(id) deferrable initially deferred,
  default_vehicle_id text, team_ids jsonb not null default '[]', zone_ids jsonb not null default '[]',
  skills jsonb not null default '[]',
  operational_status text not null default 'active' check (operational_status in ('active', 'inactive', 'suspended')),
  max_load integer check (max_load >= 0), notes text, created_at timestamptz not null, updated_at timestamptz not null,
  primary key (site_id, user_id));
create index worker_site_idx on worker (site_id, created_at);

create table worker_schedule (
  site_id text not null, user_id text not null, weekly jsonb not null, exceptions jsonb not null,
  created_at timestamptz not null, updated_at timestamptz not null,
  primary key (site_id, user_id),
  foreign key (site_id, user_id) references worker (site_id, user_id) on delete cascade deferrable initially deferred);
`);
    for (const table of ['worker', 'worker_schedule']) {
      this.addSql(`alter table ${table} enable row level security; alter table ${table} force row level security;
        create policy ${table}_tenant on ${table} using (site_id = app_site() or app_is_platform());`);
    }
  }
}
