import { Migration } from '@mikro-orm/migrations';

/**
 * Chat: rooms (standard group chats, direct 1:1 rooms, assistant rooms), their participants with a read marker,
 * and messages. A direct room has a `direct_key` (the two user ids, sorted) unique per site, so "open a direct
 * room with X" finds the same room however many requests race to create it.
 */
export class Chat0016 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table chat_room (
  id text primary key, site_id text not null references site(id) deferrable initially deferred, name text not null,
  room_type text not null check (room_type in ('standard', 'direct', 'assistant')), direct_key text,
  created_by_user_id text, is_active boolean not null default true, last_message_at timestamptz,
  created_at timestamptz not null, updated_at timestamptz not null);
create unique index chat_room_direct_idx on chat_room (site_id, direct_key) where direct_key is not null;
create index chat_room_site_idx on chat_room (site_id, last_message_at);

create table chat_participant (
  room_id text not null references chat_room(id) on delete cascade deferrable initially deferred,
  user_id text not null references app_user(id) deferrable initially deferred,
  site_id text not null references site(id) deferrable initially deferred,
  last_read_at timestamptz, created_at timestamptz not null,
  primary key (room_id, user_id));
create index chat_participant_user_idx on chat_participant (site_id, user_id);

create table chat_message (
  id text primary key, site_id text not null references site(id) deferrable initially deferred,
  room_id text not null references chat_room(id) on delete cascade deferrable initially deferred,
  content text not null, type text not null check (type in ('text', 'ai_response', 'system')),
  sender_user_id text, attachment_ids jsonb not null default '[]', is_active boolean not null default true,
  created_at timestamptz not null, updated_at timestamptz not null);
create index chat_message_room_idx on chat_message (room_id, created_at, id);
`);
    for (const table of ['chat_room', 'chat_participant', 'chat_message']) {
      this.addSql(`alter table ${table} enable row level security; alter table ${table} force row level security;
        create policy ${table}_tenant on ${table} using (site_id = app_site() or app_is_platform());`);
    }
  }
}
