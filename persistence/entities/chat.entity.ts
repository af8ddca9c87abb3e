import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

export const CHAT_ROOM_TYPES = ['standard', 'direct', 'assistant'] as const;
export type ChatRoomType = (typeof CHAT_ROOM_TYPES)[number];
export const CHAT_MESSAGE_TYPES = ['text', 'ai_response', 'system'] as const;
export type ChatMessageType = (typeof CHAT_MESSAGE_TYPES)[number];

/** A conversation between users of one site. */
export const ChatRoomSchema = defineEntity({
  name: 'ChatRoom',
  tableName: 'chat_room',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    name: p.string(),
    roomType: p.string(),
    /** Direct rooms only: the two user ids, sorted and joined, unique per site. */
    directKey: p.string().nullable(),
    createdByUserId: p.string().nullable(),
    isActive: p.boolean().default(true),
    /** Orders a user's rooms by activity. */
    lastMessageAt: p.datetime().nullable(),
    ...timestamps(),
  },
});
export type ChatRoom = InferEntity<typeof ChatRoomSchema>;

/** A user in a room, and how far they have read. */
export const ChatParticipantSchema = defineEntity({
  name: 'ChatParticipant',
  tableName: 'chat_participant',
  filters: siteFilter,
  properties: {
    roomId: p.string().primary(),
    userId: p.string().primary(),
    siteId: p.string(),
    lastReadAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type ChatParticipant = InferEntity<typeof ChatParticipantSchema>;

export const ChatMessageSchema = defineEntity({
  name: 'ChatMessage',
  tableName: 'chat_message',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    roomId: p.string(),
    content: p.text(),
    type: p.string(),
    senderUserId: p.string().nullable(),
    /** Confirmed (ready) attachments only, checked when the message is posted. */
    attachmentIds: p.json<string[]>(),
    isActive: p.boolean().default(true),
    ...timestamps(),
  },
});
export type ChatMessage = InferEntity<typeof ChatMessageSchema>;
