import type { EntityManager } from '@mikro-orm/postgresql';
import { AttachmentSchema, type Attachment } from '../../persistence/entities/attachment.entity.ts';
import { ChatMessageSchema, ChatParticipantSchema, type ChatMessage, type ChatParticipant, type ChatRoom } from '../../persistence/entities/chat.entity.ts';
import { nameOnFile, type NameColumns } from '../admin/user-name.ts';

export type ChatUser = { id: string; first_name: string | null; last_name: string | null; display_name: string };

/** A room as one participant sees it: who is in it, its last message, and how many messages they have not read. */
export type RoomView = {
  room: ChatRoom;
  participants: (ChatParticipant & { user: ChatUser })[];
  /** Who created the room, a participant or no longer one (null when unknown). */
  creator: ChatUser | null;
  lastMessage: MessageView | null;
  unreadCount: number;
};

export type MessageView = { message: ChatMessage; sender: ChatUser | null; attachments: Attachment[] };

/** Views of rooms for `viewerId`, with three queries whatever the number of rooms. */
export async function roomViews(em: EntityManager, viewerId: string, rooms: ChatRoom[]): Promise<RoomView[]> {
  if (rooms.length === 0) return [];
  const ids = rooms.map((r) => r.id);
  const participants = await em.find(ChatParticipantSchema, { roomId: { $in: ids } }, { orderBy: { createdAt: 'asc', userId: 'asc' } });
  // The creators too: one who left the room is no participant but still its creator.
  const creators = rooms.flatMap((r) => (r.createdByUserId ? [r.createdByUserId] : []));
  const users = await chatUsers(em, [...new Set([...participants.map((p) => p.userId), ...creators])]);
  const last = await em.execute<{ id: string }[]>(
    'select distinct on (room_id) id from chat_message where room_id = any(?::text[]) and is_active order by room_id, created_at desc, id desc',
    [pgArray(ids)],
  );
  const lastMessages = await messageViews(em, last.length ? await em.find(ChatMessageSchema, { id: { $in: last.map((r) => r.id) } }) : []);
  const unread = await em.execute<{ room_id: string; count: string }[]>(
    `select m.room_id, count(*) as count from chat_message m
       join chat_participant p on p.room_id = m.room_id and p.user_id = ?
      where m.room_id = any(?::text[]) and m.is_active and (m.sender_user_id is distinct from ?)
        and (p.last_read_at is null or m.created_at > p.last_read_at)
      group by m.room_id`,
    [viewerId, pgArray(ids), viewerId],
  );
  return rooms.map((room) => ({
    room,
    participants: participants.filter((p) => p.roomId === room.id).map((p) => ({ ...p, user: users.get(p.userId) ?? unknownUser(p.userId) })),
    creator: room.createdByUserId ? (users.get(room.createdByUserId) ?? null) : null,
    lastMessage: lastMessages.find((m) => m.message.roomId === room.id) ?? null,
    unreadCount: Number(unread.find((u) => u.room_id === room.id)?.count ?? 0),
  }));
}

/** Messages with their senders and attachments. */
export async function messageViews(em: EntityManager, messages: ChatMessage[]): Promise<MessageView[]> {
  const users = await chatUsers(em, messages.flatMap((m) => (m.senderUserId ? [m.senderUserId] : [])));
  const attachmentIds = [...new Set(messages.flatMap((m) => m.attachmentIds))];
  const attachments = attachmentIds.length ? await em.find(AttachmentSchema, { id: { $in: attachmentIds } }) : [];
  return messages.map((message) => ({
    message,
    sender: message.senderUserId ? (users.get(message.senderUserId) ?? unknownUser(message.senderUserId)) : null,
    attachments: message.attachmentIds.flatMap((id) => attachments.filter((a) => a.id === id)),
  }));
}

/** Names of users (row-level security shows this site's users and the caller's own record). */
async function chatUsers(em: EntityManager, ids: string[]): Promise<Map<string, ChatUser>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await em.execute<({ id: string } & NameColumns)[]>(
    'select id, first_name, last_name, display_name from app_user where id = any(?::text[])',
    [pgArray(unique)],
  );
  return new Map(rows.map((u) => [u.id, { id: u.id, first_name: u.first_name, last_name: u.last_name, display_name: displayName(u) }]));
}

/**
 * Never the email, which other participants (a customer and their driver) may not see: a user without a name is
 * "User" and the end of their id, enough to tell two such people apart in one room.
 */
function displayName(u: { id: string } & NameColumns): string {
  return nameOnFile(u) ?? `User ${u.id.slice(-6)}`;
}

function unknownUser(id: string): ChatUser {
  return { id, first_name: null, last_name: null, display_name: 'Former user' };
}

function pgArray(values: string[]): string {
  return `{${values.map((v) => `"${v.replaceAll('"', '')}"`).join(',')}}`;
}
