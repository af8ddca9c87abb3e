import { Migration } from '@mikro-orm/migrations';

/**
 * A driver's stored track: throttled history of positions (DESIGN §6), at most one point every N seconds unless the
 * driver moved M meters (the throttle is applied by `engine/drivers/driver-location.ts`, never a row per ping).
 * Keyed by the fix's own time, so a point resent by an app that was offline lands on the same key and is ignored.
 */
export class Realtime0011 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table track_point (
  site_id text not null references site(id) deferrable initially deferred,
  user_id text not null references app_user(id) deferrable initially deferred,
  recorded_at timestamptz not null,
  lat double precision not null check (lat between -90 and 90),
  lng double precision not null check (lng between -180 and 180),
  heading double precision, speed double precision, accuracy double precision,
  created_at timestamptz not null,
  primary key (site_id, user_id, recorded_at));
alter table track_point enable row level security; alter table track_point force row level security;
create policy track_point_tenant on track_point using (site_id = app_site() or app_is_platform());
`);
  }
}
