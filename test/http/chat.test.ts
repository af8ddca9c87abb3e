import { beforeAll, describe, expect, it } from 'vitest';
import { ROLES, signIn, type SiteRole } from '../support/fixtures.ts';
import type { ApiClient } from '../support/http-client.ts';
import { useTwoSites } from '../support/two-sites.ts';

type One<T> = { data: T };
type Many<T> = { data: T[]; meta: { pagination: { totalItems: number } } };
type Failure = { code: string; error: string };
type Message = { id: string; room_id: string; content: string; type: string; sender_user_id: string | null; sender: { display_name: string } | null };
type Room = {
  id: string; room_type: string; name: string; unread_count: number; last_message: Message | null;
  participants: { user_id: string; user: { display_name: string } }[]; created_by_user_id: string;
};

const sites = useTwoSites();
let as: Record<SiteRole, ApiClient>;

beforeAll(async () => {
  as = {} as Record<SiteRole, ApiClient>;
  for (const role of ROLES) {
    const { access_token } = await signIn(sites.server.client('acme'), sites.acme.users[role].email, sites.acme.users[role].password);
    as[role] = sites.server.client('acme').as({ accessToken: access_token });
  }
});

describe('chat rooms', () => {
  it('finds or creates one direct room per pair, however many open it at once', async () => {
    const opened = await Promise.all(Array.from({ length: 6 }, () => as.driver.post<One<Room>>('/api/chat/room', { recipient_id: sites.acme.users.dispatcher.id })));
    expect(opened.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(new Set(opened.map((r) => r.body.data.id)).size).toBe(1);
    const fromOtherSide = await as.dispatcher.post<One<Room>>('/api/chat/room', { recipient_id: sites.acme.users.driver.id, room_type: 'direct' });
    expect(fromOtherSide.body.data.id).toBe(opened[0]!.body.data.id);
    expect(fromOtherSide.body.data).toMatchObject({ room_type: 'direct', unread_count: 0, last_message: null });
    expect(fromOtherSide.body.data.participants.map((p) => p.user_id).sort()).toEqual([sites.acme.users.dispatcher.id, sites.acme.users.driver.id].sort());
  });

  it('keeps rooms private to participants and to the site', async () => {
    const room = (await as.driver.post<One<Room>>('/api/chat/room', { recipient_id: sites.acme.users.admin.id })).body.data;
    expect((await as.customer.get<Failure>(`/api/chat/room?id=${room.id}`)).status).toBe(404);
    expect((await as.customer.post<Failure>('/api/chat/message', { room_id: room.id, content: 'let me in' })).status).toBe(404);
    expect((await as.customer.get<Failure>(`/api/chat/message/search?room_id=${room.id}`)).status).toBe(404);
    const crossSite = await as.driver.post<Failure>('/api/chat/room', { recipient_id: sites.globex.users.driver.id });
    expect(crossSite.status).toBe(404);
    expect(crossSite.text).toContain('recipient_id');
    expect((await sites.globex.as.admin.get<Failure>(`/api/chat/room?id=${room.id}`)).status).toBe(404);
    expect((await as.driver.post<Failure>('/api/chat/room', { room_type: 'direct' })).body.code).toBe('ROOM_RECIPIENT_REQUIRED');
  });

  it('grows standard rooms, but not direct ones', async () => {
    const group = (await as.dispatcher.post<One<Room>>('/api/chat/room', { room_type: 'standard', name: 'Night shift', recipient_id: sites.acme.users.driver.id })).body.data;
    expect(group).toMatchObject({ name: 'Night shift', room_type: 'standard', created_by_user_id: sites.acme.users.dispatcher.id });
    const grown = await as.driver.post<One<Room>>('/api/chat/participant', { room_id: group.id, user_id: sites.acme.users.admin.id });
    expect(grown.body.data.participants).toHaveLength(3);
    expect((await as.driver.send<Failure>('DELETE', `/api/chat/participant?room_id=${group.id}&user_id=${sites.acme.users.admin.id}`)).status).toBe(403);
    expect((await as.dispatcher.send('DELETE', `/api/chat/participant?room_id=${group.id}&user_id=${sites.acme.users.admin.id}`)).status).toBe(200);
    expect((await as.admin.get<Failure>(`/api/chat/room?id=${group.id}`)).status).toBe(404);
    // Its creator leaves: still named, with their profile, as when they were in it.
    const creator = (group as Room & { created_by_user: unknown }).created_by_user;
    expect(creator).not.toBeNull();
    expect((await as.dispatcher.send('DELETE', `/api/chat/participant?room_id=${group.id}&user_id=${sites.acme.users.dispatcher.id}`)).status).toBe(200);
    const left = (await as.driver.get<One<Room & { created_by_user: unknown }>>(`/api/chat/room?id=${group.id}`)).body.data;
    expect([left.created_by_user_id, left.created_by_user]).toEqual([sites.acme.users.dispatcher.id, creator]);
    const direct = (await as.driver.post<One<Room>>('/api/chat/room', { recipient_id: sites.acme.users.dispatcher.id })).body.data;
    const refused = await as.driver.post<Failure>('/api/chat/participant', { room_id: direct.id, user_id: sites.acme.users.admin.id });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('ROOM_MEMBERS_FIXED');
  });
});

describe('chat messages', () => {
  it('counts unread messages per participant, shows the last one, and clears on read', async () => {
    const sent = await as.customer.post<One<Message>>('/api/chat/message', { recipient_id: sites.acme.users.dispatcher.id, content: 'Where is my parcel?' });
    expect(sent.status).toBe(201);
    expect(sent.body.data).toMatchObject({ type: 'text', sender_user_id: sites.acme.users.customer.id, content: 'Where is my parcel?' });
    await as.customer.post('/api/chat/message', { room_id: sent.body.data.room_id, content: 'Order 1234' });

    const mine = await as.customer.get<One<Room>>(`/api/chat/room?id=${sent.body.data.room_id}`);
    expect(mine.body.data).toMatchObject({ unread_count: 0, last_message: { content: 'Order 1234' } });
    const rooms = await as.dispatcher.get<Many<Room>>('/api/chat/room/search');
    expect(rooms.body.data[0]).toMatchObject({ id: sent.body.data.room_id, unread_count: 2, last_message: { content: 'Order 1234' } });

    const read = await as.dispatcher.post<One<Room>>('/api/chat/room/read', { room_id: sent.body.data.room_id });
    expect(read.body.data.unread_count).toBe(0);
    await as.dispatcher.post('/api/chat/message', { room_id: sent.body.data.room_id, content: 'On its way' });
    expect((await as.customer.get<One<Room>>(`/api/chat/room?id=${sent.body.data.room_id}`)).body.data.unread_count).toBe(1);

    const history = await as.customer.get<Many<Message>>(`/api/chat/message/search?room_id=${sent.body.data.room_id}`);
    expect(history.body.data.map((m) => m.content)).toEqual(['On its way', 'Order 1234', 'Where is my parcel?']);
    expect(history.body.data[0]!.sender?.display_name).toBeTruthy();
    const audit = await sites.acme.as.admin.get<Many<{ action: string }>>(`/api/audit/search?entity_type=ChatMessage&entity_id=${sent.body.data.id}`);
    expect(audit.body.data.map((r) => r.action)).toEqual(['create']);
  });

  it('names a participant who gave no name neutrally, never by their email, which the other side may not see', async () => {
    const email = 'no.name@acme.example';
    const created = await sites.acme.as.admin.post<One<{ id: string }>>('/api/user', { email, password: 'no-name-password', role: 'driver' });
    expect(created.status).toBe(201);
    const { access_token } = await signIn(sites.server.client('acme'), email, 'no-name-password');
    const nameless = sites.server.client('acme').as({ accessToken: access_token });
    const sent = await nameless.post<One<Message>>('/api/chat/message', { recipient_id: sites.acme.users.customer.id, content: 'At your door' });
    expect(sent.status).toBe(201);

    const room = await as.customer.get<One<Room>>(`/api/chat/room?id=${sent.body.data.room_id}`);
    const history = await as.customer.get<Many<Message>>(`/api/chat/message/search?room_id=${sent.body.data.room_id}`);
    const neutral = `User ${created.body.data.id.slice(-6)}`;
    expect(room.body.data.participants.find((p) => p.user_id === created.body.data.id)!.user.display_name).toBe(neutral);
    expect(history.body.data[0]!.sender!.display_name).toBe(neutral);
    expect(room.text + history.text).not.toContain(email);
  });

  it('keeps a read marker at most at now: a clock running ahead does not hide the next messages', async () => {
    const sent = await as.customer.post<One<Message>>('/api/chat/message', { recipient_id: sites.acme.users.driver.id, content: 'Ring twice' });
    const roomId = sent.body.data.room_id;
    const ahead = new Date(Date.now() + 3_600_000).toISOString();
    expect((await as.driver.post<One<Room>>('/api/chat/room/read', { room_id: roomId, up_to: ahead })).body.data.unread_count).toBe(0);
    await as.customer.post('/api/chat/message', { room_id: roomId, content: 'Actually, knock' });
    expect((await as.driver.get<One<Room>>(`/api/chat/room?id=${roomId}`)).body.data.unread_count).toBe(1);
  });

  it('refuses attachments that are not confirmed, and changes nothing', async () => {
    const presigned = await as.driver.post<One<{ attachment_id: string }>>('/api/attachment/presign', { file_name: 'proof.png', content_type: 'image/png', size: 68 });
    expect(presigned.status).toBe(201);
    const room = (await as.driver.post<One<Room>>('/api/chat/room', { recipient_id: sites.acme.users.admin.id })).body.data;
    const refused = await as.driver.post<Failure>('/api/chat/message', { room_id: room.id, content: 'proof', attachment_ids: [presigned.body.data.attachment_id] });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('ATTACHMENT_NOT_READY');
    expect((await as.driver.get<Many<Message>>(`/api/chat/message/search?room_id=${room.id}`)).body.data).toEqual([]);
    expect((await as.driver.post<Failure>('/api/chat/message', { room_id: room.id, content: '' })).status).toBe(400);
    expect((await as.driver.post<Failure>('/api/chat/message', { content: 'to nobody' })).body.code).toBe('MESSAGE_TARGET_REQUIRED');
  });

  it('answers in an assistant room that no assistant is connected yet', async () => {
    const room = (await as.dispatcher.post<One<Room>>('/api/chat/room', { room_type: 'assistant' })).body.data;
    expect(room.participants.map((p) => p.user_id)).toEqual([sites.acme.users.dispatcher.id]);
    await as.dispatcher.post('/api/chat/message', { room_id: room.id, content: 'Which drivers are late?' });
    const history = await as.dispatcher.get<Many<Message>>(`/api/chat/message/search?room_id=${room.id}`);
    expect(history.body.data.map((m) => m.type)).toEqual(['system', 'text']);
    expect(history.body.data[0]!.content).toContain('No AI assistant');
    for (const sort of ['sort=created_at', 'sort_by=created_at&sort_order=asc']) {
      const oldestFirst = await as.dispatcher.get<Many<Message>>(`/api/chat/message/search?room_id=${room.id}&${sort}`);
      expect(oldestFirst.body.data.map((m) => m.type)).toEqual(['text', 'system']);
    }
  });

  it('lists rooms most recently active first, or the reverse when sorted ascending', async () => {
    const older = (await as.dispatcher.post<One<Room>>('/api/chat/room', { room_type: 'assistant' })).body.data;
    const newer = (await as.dispatcher.post<One<Room>>('/api/chat/room', { room_type: 'assistant' })).body.data;
    await as.dispatcher.post('/api/chat/message', { room_id: older.id, content: 'first' });
    await as.dispatcher.post('/api/chat/message', { room_id: newer.id, content: 'second' });
    const order = async (query: string) =>
      (await as.dispatcher.get<Many<Room>>(`/api/chat/room/search?per_page=100&${query}`)).body.data.map((r) => r.id).filter((id) => id === older.id || id === newer.id);
    expect(await order('')).toEqual([newer.id, older.id]);
    expect(await order('sort=last_message_at')).toEqual([older.id, newer.id]);
  });
});
