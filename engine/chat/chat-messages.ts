import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../../persistence/audit.ts';
import { ChatMessageSchema, ChatParticipantSchema, ChatRoomSchema, type ChatMessage, type ChatRoom } from '../../persistence/entities/chat.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { appendOutbox } from '../../persistence/outbox.ts';
import { requireReadyAttachments } from '../attachments/attachment.service.ts';
import { DomainError } from '../domain-error.ts';
import { openRoom, roomForParticipant, type Chatter } from './chat-rooms.ts';

export type MessageInput = { room_id?: string; recipient_id?: string; content: string; attachment_ids?: string[] };

/** The reply an assistant room gets while the site has no AI integration: said, not silently dropped. */
export const NO_ASSISTANT_REPLY = 'No AI assistant is connected to this site yet: an administrator can connect one (integration category "ai").';

/**
 * Posts a message to a room the sender takes part in, or (with `recipient_id` and no room) to the direct room with
 * that user, opened if needed. Attachments must be confirmed. The `chat:message` event names every participant, so
 * the live feed reaches each of them (and no one else) over the socket.
 * @throws DomainError 400 MESSAGE_TARGET_REQUIRED, 404 (room, recipient, attachment), 409 ATTACHMENT_NOT_READY
 */
export async function postMessage(em: EntityManager, actor: Chatter & { role: string }, siteId: string, input: MessageInput, now: Date): Promise<{ room: ChatRoom; message: ChatMessage }> {
  const room = input.room_id
    ? await roomForParticipant(em, actor.userId, input.room_id)
    : input.recipient_id
      ? (await openRoom(em, actor, siteId, { recipient_id: input.recipient_id })).room
      : null;
  if (!room) throw DomainError.invalid('MESSAGE_TARGET_REQUIRED', 'Give room_id, or recipient_id for a direct message', 'room_id');
  const attachments = await requireReadyAttachments(em, input.attachment_ids ?? [], 'attachment_ids', { userId: actor.userId, role: actor.role });
  const message = await append(em, room, { content: input.content, type: 'text', senderUserId: actor.userId, attachmentIds: attachments.map((a) => a.id) }, now);
  // The sender has read what they wrote (a marker never moves back).
  await em.execute('update chat_participant set last_read_at = greatest(coalesce(last_read_at, ?), ?) where room_id = ? and user_id = ?', [message.createdAt, message.createdAt, room.id, actor.userId]);
  recordAudit(em, actor, { siteId, action: 'create', entityType: 'ChatMessage', entityId: message.id, before: null, after: { room_id: room.id, attachment_ids: message.attachmentIds } });
  if (room.roomType === 'assistant') await append(em, room, { content: NO_ASSISTANT_REPLY, type: 'system', senderUserId: null, attachmentIds: [] }, new Date(now.getTime() + 1));
  await em.flush();
  return { room, message };
}

async function append(em: EntityManager, room: ChatRoom, fields: Pick<ChatMessage, 'content' | 'type' | 'senderUserId' | 'attachmentIds'>, at: Date): Promise<ChatMessage> {
  const message = em.create(ChatMessageSchema, { id: newId('chatMessage'), siteId: room.siteId, roomId: room.id, isActive: true, ...fields, createdAt: at, updatedAt: at });
  room.lastMessageAt = at;
  const participants = await em.find(ChatParticipantSchema, { roomId: room.id }, { fields: ['userId'], orderBy: { userId: 'asc' } });
  appendOutbox(em, {
    siteId: room.siteId,
    event: 'chat:message',
    entityType: 'chat_message',
    entityId: message.id,
    entityVersion: null,
    data: {
      id: message.id,
      room_id: room.id,
      type: message.type,
      content: message.content,
      sender_user_id: message.senderUserId ?? null,
      attachment_ids: message.attachmentIds,
      participant_user_ids: participants.map((p) => p.userId),
      created_at: at.toISOString(),
    },
    timestamp: at,
  });
  return message;
}

/** Newest first, or oldest first (`asc`): the order of a room's messages and of a user's rooms. */
type Direction = 'asc' | 'desc';

/** A room's messages (a participant's view), newest first unless `direction` is `asc`. `before` pages back from a message time. */
export async function roomMessages(
  em: EntityManager,
  userId: string,
  roomId: string,
  page: { limit: number; offset: number; before?: string; direction: Direction },
): Promise<[ChatMessage[], number]> {
  await roomForParticipant(em, userId, roomId);
  const where = { roomId, isActive: true, ...(page.before ? { createdAt: { $lt: new Date(page.before) } } : {}) };
  return em.findAndCount(ChatMessageSchema, where, { limit: page.limit, offset: page.offset, orderBy: { createdAt: page.direction, id: page.direction } });
}

/**
 * Marks a room read for the caller up to `upTo` (the caller keeps it at most now); a marker never moves back.
 * @throws DomainError 404
 */
export async function markRead(em: EntityManager, userId: string, roomId: string, upTo: Date): Promise<void> {
  await roomForParticipant(em, userId, roomId);
  await em.execute('update chat_participant set last_read_at = greatest(coalesce(last_read_at, ?), ?) where room_id = ? and user_id = ?', [upTo, upTo, roomId, userId]);
}

/** Rooms the user takes part in, most recently active first unless `direction` is `asc` (rooms without a message last either way). */
export async function userRooms(em: EntityManager, userId: string, page: { limit: number; offset: number; direction: Direction }): Promise<[ChatRoom[], number]> {
  const memberships = await em.find(ChatParticipantSchema, { userId }, { fields: ['roomId'] });
  const { direction } = page;
  return em.findAndCount(
    ChatRoomSchema,
    { id: { $in: memberships.map((m) => m.roomId) }, isActive: true },
    { limit: page.limit, offset: page.offset, orderBy: { lastMessageAt: `${direction} nulls last`, createdAt: direction, id: direction } },
  );
}
