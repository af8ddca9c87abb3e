import { Migration } from '@mikro-orm/migrations';

/**
 * Per-site integrations (secret fields encrypted, one active provider per category), the notification outbox
 * (email, SMS and push messages and their delivery state) and customers' saved payment methods (exactly one default
 * per customer). All tenant tables under the same RLS rules as the others.
 */
export class Integrations0013 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table site_integration (
  id text primary key, site_id text not null references site(id) deferrable initially deferred,
  category text not null, integration_key text not null, routing_key text not null unique,
  config jsonb not null default '{}', secrets jsonb not null default '{}',
  is_active boolean not null default false,
  status text not null default 'configured' check (status in ('configured', 'pending_authorization', 'connected')),
  created_at timestamptz not null, updated_at timestamptz not null);
create unique index site_integration_key_idx on site_integration (site_id, integration_key);
-- One active provider per category and site: the second wall behind the service's per-category lock.
create unique index site_integration_active_idx on site_integration (site_id, category) where is_active;

create table notification_message (
  id text primary key, site_id text not null references site(id) deferrable initially deferred,
  channel text not null check (channel in ('email', 'sms', 'push')), recipient text not null, subject text,
  body text not null, provider text not null,
  status text not null check (status in ('pending', 'sent', 'failed')), attempts integer not null default 0,
  last_error text, provider_message_id text, queued_at timestamptz, sent_at timestamptz,
  created_at timestamptz not null, updated_at timestamptz not null);
create index notification_message_site_idx on notification_message (site_id, channel, created_at);
create index notification_message_unqueued_idx on notification_message (created_at) where status = 'pending' and queued_at is null;

create table payment_method (
  id text primary key, site_id text not null references site(id) deferrable initially deferred,
  customer_user_id text not null references app_user(id) deferrable initially deferred,
  provider text not null, provider_payment_method_id text not null, brand text, last4 text,
  exp_month integer, exp_year integer, is_default boolean not null default false,
  created_at timestamptz not null, updated_at timestamptz not null);
create index payment_method_customer_idx on payment_method (site_id, customer_user_id, created_at);
create unique index payment_method_provider_idx on payment_method (site_id, provider, provider_payment_method_id);
-- Exactly one default per customer: concurrent set-default calls cannot leave two.
create unique index payment_method_default_idx on payment_method (site_id, customer_user_id) where is_default;
`);
    for (const table of ['site_integration', 'notification_message', 'payment_method']) {
      this.addSql(`alter table ${table} enable row level security; alter table ${table} force row level security;
        create policy ${table}_tenant on ${table} using (site_id = app_site() or app_is_platform());`);
    }
  }
}
