import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { ChatParticipantSchema, ChatRoomSchema, type ChatRoom, type ChatRoomType } from '../../persistence/entities/chat.entity.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { DomainError } from '../domain-error.ts';

/** Who chats: a user of the site (an API key acts as its service account user). */
export type Chatter = AuditActor & { userId: string };

export type RoomInput = { room_type?: ChatRoomType; recipient_id?: string; name?: string };

/**
 * Opens a room. `direct` (the default with a recipient) is found or created: one room per pair of users, however
 * many requests race (a unique key per site; the loser of the race reads the winner's room). `standard` creates a
 * group room with the caller and the recipient, if any; `assistant` a room with the caller alone.
 * @throws DomainError 400 ROOM_RECIPIENT_REQUIRED, 404 for a recipient who is not an active user of this site
 */
export async function openRoom(em: EntityManager, actor: Chatter, siteId: string, input: RoomInput): Promise<{ room: ChatRoom; created: boolean }> {
  const type = input.room_type ?? (input.recipient_id ? 'direct' : 'standard');
  if (input.recipient_id) await requireSiteUser(em, input.recipient_id, 'recipient_id');
  if (type === 'direct') {
    if (!input.recipient_id) throw DomainError.invalid('ROOM_RECIPIENT_REQUIRED', 'A direct room needs recipient_id', 'recipient_id');
    if (input.recipient_id === actor.userId) throw DomainError.invalid('ROOM_RECIPIENT_SELF', 'A direct room is with someone else', 'recipient_id');
    return findOrCreateDirect(em, actor, siteId, input.recipient_id, input.name);
  }
  const members = type === 'standard' && input.recipient_id ? [actor.userId, input.recipient_id] : [actor.userId];
  const room = createRoom(em, actor, siteId, { type, name: input.name ?? (type === 'assistant' ? 'Assistant' : 'Group chat'), members, directKey: null });
  await em.flush();
  return { room, created: true };
}

async function findOrCreateDirect(em: EntityManager, actor: Chatter, siteId: string, recipientId: string, name: string | undefined) {
  const directKey = [actor.userId, recipientId].sort().join(':');
  const existing = await em.findOne(ChatRoomSchema, { directKey });
  if (existing) return { room: existing, created: false };
  try {
    // A savepoint, so a lost race leaves the request's transaction usable for reading the winner's room.
    const room = await em.transactional(async (inner) => {
      const created = createRoom(inner, actor, siteId, { type: 'direct', name: name ?? 'Direct', members: [actor.userId, recipientId], directKey });
      await inner.flush();
      return created;
    });
    return { room, created: true };
  } catch (error) {
    if (!(error instanceof UniqueConstraintViolationException)) throw error;
    em.clear();
    return { room: await em.findOneOrFail(ChatRoomSchema, { directKey }), created: false };
  }
}

function createRoom(em: EntityManager, actor: Chatter, siteId: string, spec: { type: ChatRoomType; name: string; members: string[]; directKey: string | null }): ChatRoom {
  const room = em.create(ChatRoomSchema, {
    id: newId('chatRoom'),
    siteId,
    name: spec.name,
    roomType: spec.type,
    directKey: spec.directKey,
    createdByUserId: actor.userId,
    isActive: true,
    lastMessageAt: null,
  });
  for (const userId of spec.members) em.create(ChatParticipantSchema, { roomId: room.id, userId, siteId, lastReadAt: null });
  recordAudit(em, actor, { siteId, action: 'create', entityType: 'ChatRoom', entityId: room.id, before: null, after: { name: spec.name, room_type: spec.type, participants: spec.members } });
  return room;
}

/**
 * A room the caller takes part in. Rooms of others are 404, as if absent: who talks to whom is private.
 * @throws DomainError 404
 */
export async function roomForParticipant(em: EntityManager, userId: string, roomId: string): Promise<ChatRoom> {
  const membership = await em.findOne(ChatParticipantSchema, { roomId, userId });
  const room = membership ? await em.findOne(ChatRoomSchema, { id: roomId, isActive: true }) : null;
  if (!room) throw DomainError.notFound('Chat room', roomId);
  return room;
}

/**
 * Adds a user to a standard room (by one of its participants). Direct and assistant rooms keep their members.
 * Adding someone already there changes nothing.
 * @throws DomainError 404 (room or user), 409 ROOM_MEMBERS_FIXED
 */
export async function addParticipant(em: EntityManager, actor: Chatter, siteId: string, roomId: string, userId: string): Promise<ChatRoom> {
  const room = await roomForParticipant(em, actor.userId, roomId);
  if (room.roomType !== 'standard') throw DomainError.conflict('ROOM_MEMBERS_FIXED', `A ${room.roomType} room keeps its participants; open a standard room for a group`);
  await requireSiteUser(em, userId, 'user_id');
  if (await em.findOne(ChatParticipantSchema, { roomId, userId })) return room;
  em.create(ChatParticipantSchema, { roomId, userId, siteId, lastReadAt: null });
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'ChatRoom', entityId: roomId, before: null, after: { added_user_id: userId } });
  await em.flush();
  return room;
}

/**
 * Removes a participant from a standard room: anyone may leave; the room's creator and staff may remove others.
 * @throws DomainError 404, 409 ROOM_MEMBERS_FIXED, 403 FORBIDDEN
 */
export async function removeParticipant(em: EntityManager, actor: Chatter & { role: string }, siteId: string, roomId: string, userId: string): Promise<void> {
  const room = await roomForParticipant(em, actor.userId, roomId);
  if (room.roomType !== 'standard') throw DomainError.conflict('ROOM_MEMBERS_FIXED', `A ${room.roomType} room keeps its participants`);
  const mayRemove = userId === actor.userId || room.createdByUserId === actor.userId || actor.role === 'admin' || actor.role === 'dispatcher';
  if (!mayRemove) throw new DomainError(403, 'FORBIDDEN', 'Only the room creator or staff remove other participants', 'user_id');
  const participant = await em.findOne(ChatParticipantSchema, { roomId, userId });
  if (!participant) throw new DomainError(404, 'NOT_FOUND', `User ${userId} is not in room ${roomId}`, 'user_id');
  em.remove(participant);
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'ChatRoom', entityId: roomId, before: { removed_user_id: userId }, after: null });
  await em.flush();
}

/** @throws DomainError 404 naming `field` unless the user has an active profile on this site */
async function requireSiteUser(em: EntityManager, userId: string, field: string): Promise<void> {
  const profile = await em.findOne(UserProfileSchema, { userId, isActive: true });
  if (!profile) throw new DomainError(404, 'NOT_FOUND', `User ${userId} not found on this site`, field);
}
