import { Migration } from '@mikro-orm/migrations';

/**
 * Driver earnings: the site's pay rules and one earning per completed job. A partial unique index keeps one default
 * rule per site (setting another default clears the old one in the same transaction), and `(site_id, job_id)` is
 * unique so the completion consumer, which runs at least once, records a job's earning exactly once.
 */
export class Earnings0015 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table earnings_rule (
  id text primary key, site_id text not null references site(id) deferrable initially deferred, name text not null,
  components jsonb not null, minimum_amount numeric(12, 2), maximum_amount numeric(12, 2),
  is_default boolean not null default false, is_active boolean not null default true,
  created_at timestamptz not null, updated_at timestamptz not null,
  check (minimum_amount is null or maximum_amount is null or minimum_amount <= maximum_amount));
create index earnings_rule_site_idx on earnings_rule (site_id, created_at);
create unique index earnings_rule_one_default on earnings_rule (site_id) where is_default;

create table driver_earning (
  id text primary key, site_id text not null references site(id) deferrable initially deferred,
  driver_user_id text not null, job_id text not null, earnings_rule_id text not null,
  amount_cents integer not null, tip_amount_cents integer not null default 0, total_amount_cents integer not null,
  currency text not null, component_breakdown jsonb not null, earned_at timestamptz not null,
  job_actual_price_cents integer not null, job_distance_meters double precision not null,
  job_duration_seconds integer not null, job_stop_count integer not null,
  created_at timestamptz not null, updated_at timestamptz not null,
  unique (site_id, job_id));
create index driver_earning_driver_idx on driver_earning (site_id, driver_user_id, earned_at);
create index driver_earning_earned_idx on driver_earning (site_id, earned_at);
`);
    for (const table of ['earnings_rule', 'driver_earning']) {
      this.addSql(`alter table ${table} enable row level security; alter table ${table} force row level security;
        create policy ${table}_tenant on ${table} using (site_id = app_site() or app_is_platform());`);
    }
  }
}
