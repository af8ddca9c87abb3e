import { Migration } from '@mikro-orm/migrations';

/**
 * Administration, auth and audit tables, with row-level security on every tenant table.
 *
 * Foreign keys are checked at commit (deferrable): the ORM's unit of work inserts a command's rows in any order.
 * RLS reads the tenant from transaction-local settings (`app.site_id`, `app.user_id`) that the application sets
 * in every transaction (persistence/tenant-scope.ts). FORCE makes the policies bind the table owner too, so only a
 * superuser or a BYPASSRLS role escapes them.
 */
export class Foundation0001 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function app_site() returns text language sql stable as $$ select nullif(current_setting('app.site_id', true), '') $$;
create function app_user() returns text language sql stable as $$ select nullif(current_setting('app.user_id', true), '') $$;
-- The platform operator manages every tenant; set only for a platform operator's own requests.
create function app_is_platform() returns boolean language sql stable as $$ select coalesce(current_setting('app.platform', true), '') = 'on' $$;

create table organization (
  id text primary key, name text not null, description text, email text, phone text, phone_country text,
  address_id text, latitude double precision, longitude double precision, is_active boolean not null default true,
  created_at timestamptz not null, updated_at timestamptz not null);

create table site (
  id text primary key, organization_id text not null references organization(id) deferrable initially deferred, name text not null,
  subdomain text not null unique, description text, email text, phone text, phone_country text, website text,
  address_id text, currency text not null, timezone text not null, industry_type text, notes text,
  unit_system text not null check (unit_system in ('metric', 'imperial')), is_active boolean not null default true,
  created_at timestamptz not null, updated_at timestamptz not null);

create table app_user (
  id text primary key, email text not null unique, password_hash text, first_name text, last_name text,
  display_name text, phone text, phone_country text, organization_id text references organization(id) deferrable initially deferred,
  home_address_id text, is_platform_operator boolean not null default false,
  is_service_account boolean not null default false, is_active boolean not null default true,
  created_at timestamptz not null, updated_at timestamptz not null);

create table user_profile (
  id text primary key, site_id text not null references site(id) deferrable initially deferred, user_id text not null references app_user(id) deferrable initially deferred,
  role text not null check (role in ('admin', 'dispatcher', 'driver', 'customer')),
  is_active boolean not null default true, created_at timestamptz not null, updated_at timestamptz not null,
  unique (site_id, user_id, role));
create index user_profile_user_idx on user_profile (user_id);

create table application (
  id text primary key, site_id text not null references site(id) deferrable initially deferred, organization_id text not null, name text not null,
  description text, role text not null check (role in ('admin', 'dispatcher', 'driver', 'customer')),
  key_prefix text not null, key_hash text not null unique, service_user_id text not null references app_user(id) deferrable initially deferred,
  package_name text, is_active boolean not null default true,
  created_at timestamptz not null, updated_at timestamptz not null);
create index application_site_idx on application (site_id, created_at);

create table address (
  id text primary key, site_id text references site(id) deferrable initially deferred, formatted_name text not null,
  formatted_name_short text not null, lat double precision not null, lng double precision not null,
  street_address text, street_address2 text, street text, house_number text, city text, county text, state text,
  state_code text, postal_code text, country text, country_code text, source text, source_id text, types jsonb,
  created_at timestamptz not null, updated_at timestamptz not null);
create index address_site_idx on address (site_id, created_at);

create table access_token (
  id text primary key, session_id text not null, site_id text references site(id) deferrable initially deferred, user_id text not null,
  profile_id text, application_id text, token_hash text not null unique, expires_at timestamptz not null,
  is_active boolean not null default true, created_at timestamptz not null);
create index access_token_session_idx on access_token (session_id);

create table refresh_token (
  id text primary key, session_id text not null, site_id text references site(id) deferrable initially deferred, user_id text not null,
  profile_id text, token_hash text not null unique, expires_at timestamptz not null, used_at timestamptz,
  revoked_at timestamptz, created_at timestamptz not null);
create index refresh_token_session_idx on refresh_token (session_id);

create table auth_ticket (
  id text primary key, purpose text not null check (purpose in ('pre_auth', 'password_reset')),
  site_id text references site(id) deferrable initially deferred, user_id text not null, token_hash text not null unique,
  expires_at timestamptz not null, used_at timestamptz, created_at timestamptz not null);

create table mail_message (
  id text primary key, site_id text references site(id) deferrable initially deferred, recipient text not null, subject text not null,
  body text not null, created_at timestamptz not null);
create index mail_message_recipient_idx on mail_message (recipient, created_at);

create table audit_record (
  id text primary key, site_id text references site(id) deferrable initially deferred, user_id text, application_id text, action text not null,
  entity_type text not null, entity_id text not null, changes jsonb not null, previous_data jsonb, new_data jsonb,
  request_id text, created_at timestamptz not null);
create index audit_record_site_idx on audit_record (site_id, created_at);
create index audit_record_entity_idx on audit_record (site_id, entity_type, entity_id);

create function audit_record_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'audit_record is append-only: % is not allowed', tg_op using errcode = 'insufficient_privilege';
end $$;
create trigger audit_record_no_change before update or delete on audit_record
  for each row execute function audit_record_append_only();
create trigger audit_record_no_truncate before truncate on audit_record
  for each statement execute function audit_record_append_only();
`);
    for (const table of ['application', 'mail_message', 'audit_record']) {
      this.addSql(`alter table ${table} enable row level security; alter table ${table} force row level security;
        create policy ${table}_tenant on ${table} using (site_id is not distinct from app_site() or app_is_platform());`);
    }
    // A user's own sessions and tickets are visible when acting as that user (sign-out everywhere, password reset).
    for (const table of ['access_token', 'refresh_token', 'auth_ticket']) {
      this.addSql(`alter table ${table} enable row level security; alter table ${table} force row level security;
        create policy ${table}_tenant on ${table}
          using (site_id is not distinct from app_site() or user_id = app_user() or app_is_platform());`);
    }
    this.addSql(`alter table user_profile enable row level security; alter table user_profile force row level security;
      create policy user_profile_tenant on user_profile
        using (site_id = app_site() or user_id = app_user() or app_is_platform())
        with check (site_id = app_site() or app_is_platform());`);
    this.addSql(`alter table address enable row level security; alter table address force row level security;
      create policy address_tenant on address
        using (site_id is not distinct from app_site() or site_id is null or app_is_platform())
        with check (site_id is not distinct from app_site() or app_is_platform());`);
  }
}
