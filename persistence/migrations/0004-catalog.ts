import { Migration } from '@mikro-orm/migrations';

/**
 * The site catalog jobs refer to: service types and options (extras). Same RLS rules as the other tenant tables.
 * A job's service type becomes a real foreign key now that its table exists; options stay a JSON id list on the
 * job (checked by the engine), since a job carries several.
 */
export class Catalog0004 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table service_type (
  id text primary key, site_id text not null references site(id) deferrable initially deferred, name text not null,
  description text, code text, default_duration_seconds integer check (default_duration_seconds >= 0),
  base_price_cents integer check (base_price_cents >= 0), currency text, vehicle_types jsonb,
  is_active boolean not null default true, created_at timestamptz not null, updated_at timestamptz not null);
create index service_type_site_idx on service_type (site_id, created_at);
create unique index service_type_code_idx on service_type (site_id, code) where code is not null;

create table job_option (
  id text primary key, site_id text not null references site(id) deferrable initially deferred, name text not null,
  description text, price_cents integer check (price_cents >= 0), currency text,
  is_active boolean not null default true, created_at timestamptz not null, updated_at timestamptz not null);
create index job_option_site_idx on job_option (site_id, created_at);

alter table job add constraint job_service_type_fk foreign key (service_type_id) references service_type(id) deferrable initially deferred;
`);
    for (const table of ['service_type', 'job_option']) {
      this.addSql(`alter table ${table} enable row level security; alter table ${table} force row level security;
        create policy ${table}_tenant on ${table} using (site_id = app_site() or app_is_platform());`);
    }
  }
}
