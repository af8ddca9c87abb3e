import { Type, type Static } from 'typebox';
import type { MessageView, RoomView } from '../../engine/chat/chat-view.ts';
import { CHAT_MESSAGE_TYPES, CHAT_ROOM_TYPES } from '../../persistence/entities/chat.entity.ts';
import { AttachmentResponse } from './attachment.schema.ts';
import { Id, Nullable, Timestamp } from './common.schema.ts';

const RoomType = Type.Union([Type.Literal(CHAT_ROOM_TYPES[0]), Type.Literal(CHAT_ROOM_TYPES[1]), Type.Literal(CHAT_ROOM_TYPES[2])], { description: 'standard (group), direct (1:1), assistant' });
const MessageType = Type.Union([Type.Literal(CHAT_MESSAGE_TYPES[0]), Type.Literal(CHAT_MESSAGE_TYPES[1]), Type.Literal(CHAT_MESSAGE_TYPES[2])]);

export const ChatUserResponse = Type.Object(
  { id: Id, first_name: Nullable(Type.String()), last_name: Nullable(Type.String()), display_name: Type.String() },
  { additionalProperties: false },
);

export const ChatMessageResponse = Type.Object(
  {
    id: Id,
    room_id: Id,
    site_id: Id,
    content: Type.String(),
    type: MessageType,
    sender_user_id: Nullable(Id),
    sender: Nullable(ChatUserResponse),
    attachments: Type.Array(AttachmentResponse),
    is_active: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

const ParticipantResponse = Type.Object(
  { room_id: Id, user_id: Id, user: ChatUserResponse, last_read_at: Nullable(Timestamp), created_at: Timestamp },
  { additionalProperties: false },
);

export const ChatRoomResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    name: Type.String(),
    room_type: RoomType,
    created_by_user_id: Nullable(Id),
    created_by_user: Nullable(ChatUserResponse),
    participants: Type.Array(ParticipantResponse),
    last_message: Nullable(ChatMessageResponse),
    unread_count: Type.Integer({ minimum: 0, description: "messages from others after the caller's read marker" }),
    is_active: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const RoomBody = Type.Object(
  { recipient_id: Type.Optional(Id), room_type: Type.Optional(RoomType), name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
  { additionalProperties: false },
);

export const MessageBody = Type.Object(
  {
    room_id: Type.Optional(Id),
    recipient_id: Type.Optional(Id),
    content: Type.String({ minLength: 1, maxLength: 10_000 }),
    attachment_ids: Type.Optional(Type.Array(Id, { maxItems: 20 })),
  },
  { additionalProperties: false },
);

export const ParticipantBody = Type.Object({ room_id: Id, user_id: Id }, { additionalProperties: false });
export const ReadBody = Type.Object({ room_id: Id, up_to: Type.Optional(Timestamp) }, { additionalProperties: false });

/** Renders an attachment with its signed download URL (the attachment operations' presenter). */
type AttachmentPresenter = (attachment: MessageView['attachments'][number]) => Promise<Static<typeof AttachmentResponse>>;

export async function toChatMessageResponse(view: MessageView, present: AttachmentPresenter) {
  const { message } = view;
  return {
    id: message.id,
    room_id: message.roomId,
    site_id: message.siteId,
    content: message.content,
    type: message.type as (typeof CHAT_MESSAGE_TYPES)[number],
    sender_user_id: message.senderUserId ?? null,
    sender: view.sender,
    attachments: await Promise.all(view.attachments.map(present)),
    is_active: message.isActive,
    created_at: message.createdAt.toISOString(),
    updated_at: message.updatedAt.toISOString(),
  };
}

export async function toChatRoomResponse(view: RoomView, present: AttachmentPresenter) {
  const { room } = view;
  return {
    id: room.id,
    site_id: room.siteId,
    name: room.name,
    room_type: room.roomType as (typeof CHAT_ROOM_TYPES)[number],
    created_by_user_id: room.createdByUserId ?? null,
    created_by_user: view.creator,
    participants: view.participants.map((p) => ({
      room_id: p.roomId,
      user_id: p.userId,
      user: p.user,
      last_read_at: p.lastReadAt ? p.lastReadAt.toISOString() : null,
      created_at: p.createdAt.toISOString(),
    })),
    last_message: view.lastMessage ? await toChatMessageResponse(view.lastMessage, present) : null,
    unread_count: view.unreadCount,
    is_active: room.isActive,
    created_at: room.createdAt.toISOString(),
    updated_at: room.updatedAt.toISOString(),
  };
}
