import { Migration } from '@mikro-orm/migrations';

/**
 * ETA notifications (issue 5): a site's notification configs (trigger, threshold, recipient, channel, debounce,
 * template) and one row per notification an ETA check sent. `(stop_id, config_id, recipient_user_id)` is unique, so
 * a trigger fires once per stop, threshold and recipient however often the driver's position is re-checked (the
 * check runs at least once); the `(stop_id, recipient_user_id, sent_at)` index serves the debounce lookup. A site
 * has at most one config per trigger type, recipient type and delivery method: the upsert's natural key.
 */
export class Eta0017 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table eta_notification_config (
  id text primary key, site_id text not null references site(id) deferrable initially deferred,
  trigger_type text not null check (trigger_type in ('time_before_arrival', 'distance_away')),
  trigger_value double precision not null check (trigger_value > 0),
  recipient_type text not null check (recipient_type in ('customer', 'driver', 'admin')),
  delivery_method text not null check (delivery_method in ('sms', 'email', 'push')),
  debounce_seconds integer not null default 300 check (debounce_seconds >= 0),
  enabled boolean not null default true,
  template_id text not null, template_title text not null, template_body text not null,
  template_is_custom boolean not null default false,
  created_at timestamptz not null, updated_at timestamptz not null,
  unique (site_id, trigger_type, recipient_type, delivery_method));

create table eta_notification_sent (
  id text primary key, site_id text not null references site(id) deferrable initially deferred,
  stop_id text not null references stop(id) on delete cascade deferrable initially deferred,
  job_id text not null,
  config_id text not null references eta_notification_config(id) on delete cascade deferrable initially deferred,
  recipient_user_id text not null, driver_user_id text not null, notification_id text not null,
  eta_seconds integer not null, distance_meters double precision not null,
  sent_at timestamptz not null, created_at timestamptz not null, updated_at timestamptz not null,
  unique (stop_id, config_id, recipient_user_id));
create index eta_notification_sent_debounce_idx on eta_notification_sent (stop_id, recipient_user_id, sent_at);
create index eta_notification_sent_site_idx on eta_notification_sent (site_id, sent_at);
`);
    for (const table of ['eta_notification_config', 'eta_notification_sent']) {
      this.addSql(`alter table ${table} enable row level security; alter table ${table} force row level security;
        create policy ${table}_tenant on ${table} using (site_id = app_site() or app_is_platform());`);
    }
  }
}
