import { Migration } from '@mikro-orm/migrations';

/** Webhook subscriptions (secrets encrypted) and the delivery attempt log, both tenant tables under RLS. */
export class Webhooks0005 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table webhook_subscription (
  id text primary key, site_id text not null references site(id) deferrable initially deferred, url text not null,
  events jsonb not null, secret_ciphertext text, is_active boolean not null default true, deactivated_at timestamptz,
  deactivation_reason text, description text, created_by_user_id text,
  created_at timestamptz not null, updated_at timestamptz not null);
create index webhook_subscription_site_idx on webhook_subscription (site_id, is_active);

create table webhook_delivery (
  id text primary key, site_id text not null references site(id) deferrable initially deferred,
  subscription_id text not null references webhook_subscription(id) on delete cascade deferrable initially deferred,
  event_id text not null, event text not null, attempt integer not null,
  status text not null check (status in ('succeeded', 'failed', 'abandoned')), response_status integer,
  duration_ms integer not null, error text, created_at timestamptz not null);
create index webhook_delivery_subscription_idx on webhook_delivery (subscription_id, created_at);
create index webhook_delivery_event_idx on webhook_delivery (subscription_id, event_id);
`);
    for (const table of ['webhook_subscription', 'webhook_delivery']) {
      this.addSql(`alter table ${table} enable row level security; alter table ${table} force row level security;
        create policy ${table}_tenant on ${table} using (site_id = app_site() or app_is_platform());`);
    }
  }
}
