import type { Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSiteFixture, ROLES, signIn, type SiteFixture, type SiteRole } from '../support/fixtures.ts';
import type { ApiClient } from '../support/http-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait-for.ts';
import { collect, connectSocket } from './socket-client.ts';

type Feed = { event: string; entity_id: string; data: { room_id: string; content: string; participant_user_ids: string[] } };

let server: TestServer;
let acme: SiteFixture;
const rest = {} as Record<SiteRole, ApiClient>;
const tokens = {} as Record<SiteRole, string>;
const sockets: Socket[] = [];

async function connect(namespace: '/driver' | '/dispatch', token: string): Promise<Socket> {
  const socket = await connectSocket(server.port, 'acme', namespace, { token });
  sockets.push(socket);
  return socket;
}

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  for (const role of ROLES) {
    tokens[role] = (await signIn(server.client('acme'), acme.users[role].email, acme.users[role].password)).access_token;
    rest[role] = server.client('acme').as({ accessToken: tokens[role] });
  }
});
afterAll(async () => {
  for (const socket of sockets) socket.close();
  await server.close();
});

describe('chat over the socket', () => {
  it("reaches a connected participant's socket and no one else's", async () => {
    const driver = await connect('/driver', tokens.driver);
    const dispatcher = await connect('/dispatch', tokens.dispatcher);
    const admin = await connect('/dispatch', tokens.admin);
    const driverFeed = collect<Feed>(driver, 'feed');
    const dispatcherFeed = collect<Feed>(dispatcher, 'feed');
    const adminFeed = collect<Feed>(admin, 'feed');

    const sent = await rest.driver.post<{ data: { id: string; room_id: string } }>('/api/chat/message', { recipient_id: acme.users.dispatcher.id, content: 'Stuck at the gate' });
    expect(sent.status).toBe(201);
    // A job event after it: once the admin (who sees every site event) has it, the chat message was published too.
    const job = await acme.as.dispatcher.post<{ data: { id: string } }>('/api/job', { customer_email: 'c@x.example', stops: [{ type: 'pickup', street_address: '1 Main', point: { lat: 48.85, lng: 2.35 } }] });
    await waitFor('the job event at the admin', () => adminFeed.some((e) => e.entity_id === job.body.data.id));

    const chat = (feed: Feed[]) => feed.filter((e) => e.event === 'chat:message');
    expect(chat(dispatcherFeed).map((e) => e.data.content)).toEqual(['Stuck at the gate']);
    expect(chat(driverFeed).map((e) => e.entity_id)).toEqual([sent.body.data.id]);
    expect(chat(dispatcherFeed)[0]!.data.participant_user_ids.sort()).toEqual([acme.users.dispatcher.id, acme.users.driver.id].sort());
    expect(chat(adminFeed)).toEqual([]);
  });

  it('arrives within milliseconds of the commit, not at the relay\'s next poll (a second apart)', async () => {
    const dispatcher = await connect('/dispatch', tokens.dispatcher);
    const dispatcherFeed = collect<Feed>(dispatcher, 'feed');
    // Five in a row: left to the poll, each would arrive within 400 ms about two times in five.
    for (let i = 0; i < 5; i++) {
      const sent = await rest.driver.post<{ data: { id: string } }>('/api/chat/message', { recipient_id: acme.users.dispatcher.id, content: `ping ${i}` });
      await waitFor(`message ${i} at the dispatcher`, () => dispatcherFeed.some((e) => e.entity_id === sent.body.data.id), 400);
    }
    expect(dispatcherFeed.filter((e) => e.event === 'chat:message').map((e) => e.data.content)).toEqual([0, 1, 2, 3, 4].map((i) => `ping ${i}`));
  });
});
