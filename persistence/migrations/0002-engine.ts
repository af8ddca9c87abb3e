import { Migration } from '@mikro-orm/migrations';

/**
 * Workflows (versioned, per site and entity type), jobs and stops as persisted actors (state, phase, version,
 * XState snapshot), and the transactional outbox. Same RLS rules as the foundation tables.
 */
export class Engine0002 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table workflow (
  id text primary key, site_id text not null references site(id) deferrable initially deferred,
  entity_type text not null check (entity_type in ('job', 'stop', 'route')), version integer not null,
  is_current boolean not null, states jsonb not null, transitions jsonb not null, created_by_user_id text,
  created_at timestamptz not null, unique (site_id, entity_type, version));
create unique index workflow_current_idx on workflow (site_id, entity_type) where is_current;

create table job (
  id text primary key, site_id text not null references site(id) deferrable initially deferred,
  workflow_id text not null references workflow(id) deferrable initially deferred, workflow_state_id text not null,
  phase text not null, version integer not null default 1, snapshot jsonb not null,
  customer_user_id text references app_user(id) deferrable initially deferred, service_type_id text,
  option_ids jsonb not null, estimate_id text, driver_user_id text, route_id text, customer_notes text,
  driver_notes text, internal_notes text, payment_method text, zone_override boolean not null default false,
  cancellation_notes text, created_by_user_id text, completed_at timestamptz, cancelled_at timestamptz,
  deleted_at timestamptz, created_at timestamptz not null, updated_at timestamptz not null);
create index job_site_created_idx on job (site_id, created_at);
create index job_site_state_idx on job (site_id, workflow_state_id);
create index job_site_customer_idx on job (site_id, customer_user_id);
create index job_site_driver_idx on job (site_id, driver_user_id);

create table stop (
  id text primary key, site_id text not null references site(id) deferrable initially deferred,
  job_id text not null references job(id) deferrable initially deferred,
  workflow_id text not null references workflow(id) deferrable initially deferred, workflow_state_id text not null,
  phase text not null, version integer not null default 1, snapshot jsonb not null, type text not null,
  sort_order integer not null, address_id text not null references address(id) deferrable initially deferred,
  complete_after timestamptz, complete_before timestamptz, contact_name text, contact_phone text,
  contact_phone_country text, customer_notes text, driver_notes text, internal_notes text, cancellation_notes text,
  completed_at timestamptz, created_at timestamptz not null, updated_at timestamptz not null,
  check (complete_before is null or complete_after is null or complete_before > complete_after));
create index stop_job_idx on stop (job_id, sort_order);

create table outbox (
  id text primary key, seq bigint generated always as identity, site_id text not null references site(id) deferrable initially deferred,
  event text not null, entity_type text not null, entity_id text not null, entity_version integer,
  payload jsonb not null, created_at timestamptz not null, relayed_at timestamptz);
create index outbox_pending_idx on outbox (seq) where relayed_at is null;
create index outbox_entity_idx on outbox (site_id, entity_id, seq);
`);
    for (const table of ['workflow', 'job', 'stop', 'outbox']) {
      this.addSql(`alter table ${table} enable row level security; alter table ${table} force row level security;
        create policy ${table}_tenant on ${table} using (site_id = app_site() or app_is_platform());`);
    }
  }
}
