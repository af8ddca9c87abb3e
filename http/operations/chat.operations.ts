import { Type } from 'typebox';
import { markRead, postMessage, roomMessages, userRooms } from '../../engine/chat/chat-messages.ts';
import { addParticipant, openRoom, removeParticipant, roomForParticipant, type Chatter } from '../../engine/chat/chat-rooms.ts';
import { messageViews, roomViews } from '../../engine/chat/chat-view.ts';
import type { Attachment } from '../../persistence/entities/attachment.entity.ts';
import { defineOperation, type OperationContext } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { ChatMessageResponse, ChatRoomResponse, MessageBody, ParticipantBody, ReadBody, RoomBody, toChatMessageResponse, toChatRoomResponse } from '../schemas/chat.schema.ts';
import { DataResponse, Id, IdQuery, Timestamp } from '../schemas/common.schema.ts';
import { requireSite } from '../tenancy.ts';
import { present } from './attachment.operations.ts';
import { commandContext } from './command-context.ts';

const TAG = 'Chat';
const ROOM_SORTABLE = { last_message_at: 'lastMessageAt' };
const MESSAGE_SORTABLE = { created_at: 'createdAt' };

type Ctx = OperationContext<unknown, unknown, unknown>;

/** The caller as a chat participant: every chatter is a user (an API key acts as its service account). */
function chatter(ctx: Ctx): Chatter & { role: string } {
  const { actor } = commandContext(ctx);
  if (!actor.userId) throw new Error('a chat operation ran without a user');
  return { ...actor, userId: actor.userId };
}

const presenter = (ctx: Ctx) => (attachment: Attachment) => present(ctx.services, requireSite(ctx.site), attachment);

async function roomResponse(ctx: Ctx, userId: string, roomId: string) {
  const [view] = await ctx.transaction(async (em) => roomViews(em, userId, [await roomForParticipant(em, userId, roomId)]));
  return toChatRoomResponse(view!, presenter(ctx));
}

export const chatOperations = [
  defineOperation({
    id: 'chat.room.open',
    method: 'POST',
    path: '/chat/room',
    summary: 'Open a room: direct rooms are found or created by recipient; standard and assistant rooms are created',
    tag: TAG,
    access: 'chat.use',
    host: 'site',
    body: RoomBody,
    response: DataResponse(ChatRoomResponse),
    handler: async (ctx) => {
      const me = chatter(ctx as Ctx);
      const { room } = await ctx.transaction((em) => openRoom(em, me, requireSite(ctx.site).id, ctx.body));
      return { data: await roomResponse(ctx as Ctx, me.userId, room.id) };
    },
  }),
  defineOperation({
    id: 'chat.room.get',
    method: 'GET',
    path: '/chat/room',
    summary: 'A room the caller takes part in, with its participants, last message and unread count',
    tag: TAG,
    access: 'chat.use',
    host: 'site',
    query: IdQuery,
    response: DataResponse(ChatRoomResponse),
    handler: async (ctx) => ({ data: await roomResponse(ctx as Ctx, chatter(ctx as Ctx).userId, ctx.query.id) }),
  }),
  defineOperation({
    id: 'chat.room.search',
    method: 'GET',
    path: '/chat/room/search',
    summary: "The caller's rooms, most recently active first (sort=last_message_at for the reverse)",
    tag: TAG,
    access: 'chat.use',
    host: 'site',
    query: Type.Object(pagingQuery(ROOM_SORTABLE), { additionalProperties: false }),
    response: SearchResponse(ChatRoomResponse),
    handler: async (ctx) => {
      const me = chatter(ctx as Ctx);
      const paging = readPaging(ctx.query, ROOM_SORTABLE, '-last_message_at');
      const [views, total] = await ctx.transaction(async (em) => {
        const [rooms, count] = await userRooms(em, me.userId, { limit: paging.perPage, offset: paging.offset, direction: paging.orderBy.lastMessageAt ?? 'desc' });
        return [await roomViews(em, me.userId, rooms), count] as const;
      });
      return searchBody(await Promise.all(views.map((v) => toChatRoomResponse(v, presenter(ctx as Ctx)))), total, paging);
    },
  }),
  defineOperation({
    id: 'chat.room.read',
    method: 'POST',
    path: '/chat/room/read',
    summary: 'Mark a room read up to a time (default now); the marker never moves back',
    tag: TAG,
    access: 'chat.use',
    host: 'site',
    body: ReadBody,
    response: DataResponse(ChatRoomResponse),
    handler: async (ctx) => {
      const me = chatter(ctx as Ctx);
      const now = ctx.services.clock.now();
      // Never past now: a phone whose clock runs ahead would otherwise mark messages not yet written as read.
      const upTo = ctx.body.up_to && new Date(ctx.body.up_to) < now ? new Date(ctx.body.up_to) : now;
      await ctx.transaction((em) => markRead(em, me.userId, ctx.body.room_id, upTo));
      return { data: await roomResponse(ctx as Ctx, me.userId, ctx.body.room_id) };
    },
  }),
  defineOperation({
    id: 'chat.participant.add',
    method: 'POST',
    path: '/chat/participant',
    summary: 'Add a user of the site to a standard room',
    tag: TAG,
    access: 'chat.use',
    host: 'site',
    body: ParticipantBody,
    response: DataResponse(ChatRoomResponse),
    handler: async (ctx) => {
      const me = chatter(ctx as Ctx);
      await ctx.transaction((em) => addParticipant(em, me, requireSite(ctx.site).id, ctx.body.room_id, ctx.body.user_id));
      return { data: await roomResponse(ctx as Ctx, me.userId, ctx.body.room_id) };
    },
  }),
  defineOperation({
    id: 'chat.participant.remove',
    method: 'DELETE',
    path: '/chat/participant',
    summary: 'Leave a standard room, or remove someone from it (its creator and staff)',
    tag: TAG,
    access: 'chat.use',
    host: 'site',
    query: Type.Object({ room_id: Id, user_id: Id }, { additionalProperties: false }),
    response: DataResponse(Type.Object({ room_id: Id, user_id: Id, removed: Type.Literal(true) }, { additionalProperties: false })),
    handler: async (ctx) => {
      const me = chatter(ctx as Ctx);
      await ctx.transaction((em) => removeParticipant(em, me, requireSite(ctx.site).id, ctx.query.room_id, ctx.query.user_id));
      return { data: { room_id: ctx.query.room_id, user_id: ctx.query.user_id, removed: true as const } };
    },
  }),
  defineOperation({
    id: 'chat.message.post',
    method: 'POST',
    path: '/chat/message',
    summary: 'Post a message to a room, or to the direct room with recipient_id; attachments must be confirmed',
    tag: TAG,
    access: 'chat.use',
    host: 'site',
    body: MessageBody,
    status: 201,
    response: DataResponse(ChatMessageResponse),
    handler: async (ctx) => {
      const me = chatter(ctx as Ctx);
      const view = await ctx.transaction(async (em) => {
        const { message } = await postMessage(em, me, requireSite(ctx.site).id, ctx.body, ctx.services.clock.now());
        const [rendered] = await messageViews(em, [message]);
        return rendered!;
      });
      return { data: await toChatMessageResponse(view, presenter(ctx as Ctx)) };
    },
  }),
  defineOperation({
    id: 'chat.message.search',
    method: 'GET',
    path: '/chat/message/search',
    summary: "A room's messages, newest first (sort=created_at for oldest first); `before` pages back from a time",
    tag: TAG,
    access: 'chat.use',
    host: 'site',
    query: Type.Object({ room_id: Id, before: Type.Optional(Timestamp), ...pagingQuery(MESSAGE_SORTABLE) }, { additionalProperties: false }),
    response: SearchResponse(ChatMessageResponse),
    handler: async (ctx) => {
      const me = chatter(ctx as Ctx);
      const paging = readPaging(ctx.query, MESSAGE_SORTABLE, '-created_at');
      const [views, total] = await ctx.transaction(async (em) => {
        const page = { limit: paging.perPage, offset: paging.offset, direction: paging.orderBy.createdAt ?? 'desc', ...(ctx.query.before ? { before: ctx.query.before } : {}) };
        const [messages, count] = await roomMessages(em, me.userId, ctx.query.room_id, page);
        return [await messageViews(em, messages), count] as const;
      });
      return searchBody(await Promise.all(views.map((v) => toChatMessageResponse(v, presenter(ctx as Ctx)))), total, paging);
    },
  }),
];
