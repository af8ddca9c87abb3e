import { Migration } from '@mikro-orm/migrations';

/**
 * Custom field definitions and their values, attachments (uploaded by signed URL, then confirmed), the links of
 * attachments to jobs, and each site's branding. Values live in a `custom_fields` JSON column on the entity they
 * describe (a customer's on their customer profile, since users are shared between sites), so a record and its
 * values are read and written together; a GIN index serves searches by value (JSON containment).
 */
export class Resources0012 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table custom_field_definition (
  id text primary key, site_id text not null references site(id) deferrable initially deferred,
  entity_type text not null check (entity_type in ('job', 'stop', 'worker', 'customer')),
  key text not null, label text not null,
  data_type text not null check (data_type in ('text', 'number', 'select', 'date', 'checkbox')),
  is_required boolean not null default false, options jsonb not null default '[]', sort_order integer not null default 0,
  is_active boolean not null default true, created_at timestamptz not null, updated_at timestamptz not null,
  unique (site_id, entity_type, key));

alter table job add column custom_fields jsonb not null default '{}';
alter table stop add column custom_fields jsonb not null default '{}';
alter table worker add column custom_fields jsonb not null default '{}';
alter table user_profile add column custom_fields jsonb not null default '{}';
create index job_custom_fields_idx on job using gin (custom_fields jsonb_path_ops);
create index stop_custom_fields_idx on stop using gin (custom_fields jsonb_path_ops);
create index worker_custom_fields_idx on worker using gin (custom_fields jsonb_path_ops);
create index user_profile_custom_fields_idx on user_profile using gin (custom_fields jsonb_path_ops);

create table attachment (
  id text primary key, site_id text not null references site(id) deferrable initially deferred,
  created_by_user_id text references app_user(id) deferrable initially deferred,
  file_name text not null, content_type text not null, size integer not null check (size >= 0), purpose text,
  storage text not null check (storage in ('local', 's3')), stored_name text not null, remote_path text not null,
  status text not null default 'pending' check (status in ('pending', 'ready')),
  upload_expires_at timestamptz not null, confirmed_at timestamptz,
  is_active boolean not null default true, created_at timestamptz not null, updated_at timestamptz not null);
create index attachment_site_idx on attachment (site_id, created_at);

create table job_attachment (
  site_id text not null references site(id) deferrable initially deferred,
  job_id text not null references job(id) deferrable initially deferred,
  attachment_id text not null references attachment(id) deferrable initially deferred,
  created_by_user_id text, created_at timestamptz not null,
  primary key (job_id, attachment_id));
create index job_attachment_site_idx on job_attachment (site_id, job_id);

create table site_branding (
  site_id text primary key references site(id) deferrable initially deferred,
  company_name text, app_name text, tagline text, logo_attachment_id text references attachment(id) deferrable initially deferred,
  primary_color text, secondary_color text, accent_color text, support_email text, support_phone text, website text,
  email_footer text, created_at timestamptz not null, updated_at timestamptz not null);
`);
    for (const table of ['custom_field_definition', 'attachment', 'job_attachment', 'site_branding']) {
      this.addSql(`alter table ${table} enable row level security; alter table ${table} force row level security;
        create policy ${table}_tenant on ${table} using (site_id = app_site() or app_is_platform());`);
    }
  }
}
