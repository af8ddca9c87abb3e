import { Migration } from '@mikro-orm/migrations';

/**
 * The site's fleet: vehicles, teams and zones (service areas and banned areas), tenant tables under the same RLS
 * rules as the others. Vehicle types are checked by the API, not by a constraint, so adding a type needs no
 * migration; a zone's kind is checked here because the banned-zone rule of job creation depends on it.
 */
export class Fleet0006 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table vehicle (
  id text primary key, site_id text not null references site(id) deferrable initially deferred, name text not null,
  type text not null, plate_number text, capacity jsonb,
  is_active boolean not null default true, created_at timestamptz not null, updated_at timestamptz not null);
create index vehicle_site_idx on vehicle (site_id, created_at);

create table team (
  id text primary key, site_id text not null references site(id) deferrable initially deferred, name text not null,
  description text, is_active boolean not null default true, created_at timestamptz not null, updated_at timestamptz not null);
create index team_site_idx on team (site_id, created_at);

create table zone (
  id text primary key, site_id text not null references site(id) deferrable initially deferred, name text not null,
  kind text not null check (kind in ('service', 'banned')), geometry jsonb not null, description text,
  is_active boolean not null default true, created_at timestamptz not null, updated_at timestamptz not null);
create index zone_site_idx on zone (site_id, created_at);
create index zone_active_kind_idx on zone (site_id, kind) where is_active;
`);
    for (const table of ['vehicle', 'team', 'zone']) {
      this.addSql(`alter table ${table} enable row level security; alter table ${table} force row level security;
        create policy ${table}_tenant on ${table} using (site_id = app_site() or app_is_platform());`);
    }
  }
}
