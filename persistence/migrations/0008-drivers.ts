import { Migration } from '@mikro-orm/migrations';

/**
 * The driver actor's persisted state on one site (DESIGN §2): availability with its machine snapshot, and the last
 * known position. `version` counts availability changes only (the optimistic check of PUT /driver/status);
 * location pings write without it, ordered by `last_recorded_at`, so a stream of pings never conflicts with a
 * status change. No history here: throttled track points belong to the realtime work.
 */
export class Drivers0008 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table driver_state (
  site_id text not null references site(id) deferrable initially deferred,
  user_id text not null references app_user(id) deferrable initially deferred,
  availability text not null default 'offline' check (availability in ('offline', 'available', 'busy', 'on_break')),
  version integer not null default 0 check (version >= 0),
  snapshot jsonb not null default '{"value": "offline"}',
  last_lat double precision check (last_lat between -90 and 90),
  last_lng double precision check (last_lng between -180 and 180),
  last_heading double precision, last_speed double precision, last_accuracy double precision,
  last_recorded_at timestamptz, active_route_id text, current_load jsonb,
  updated_at timestamptz not null,
  primary key (site_id, user_id));
create index driver_state_availability_idx on driver_state (site_id, availability);
alter table driver_state enable row level security; alter table driver_state force row level security;
create policy driver_state_tenant on driver_state using (site_id = app_site() or app_is_platform());
`);
  }
}
