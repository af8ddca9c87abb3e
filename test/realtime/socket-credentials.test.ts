import type { Socket } from 'socket.io-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOperator, createSiteFixture, signIn, type SiteFixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait-for.ts';
import { ask, collect, connectSocket } from './socket-client.ts';

type Reply = { data?: unknown; code?: string };
type Refused = { code: string };

let server: TestServer;
let acme: SiteFixture;
const open: Socket[] = [];

async function connect(namespace: '/driver' | '/dispatch', token: string): Promise<Socket> {
  const socket = await connectSocket(server.port, 'acme', namespace, { token });
  open.push(socket);
  return socket;
}

const fix = () => ({ lat: 48.85, lng: 2.35, recorded_at: server.clock.now().toISOString() });

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
});
afterEach(() => {
  for (const socket of open.splice(0)) socket.close();
});
afterAll(() => server.close());

describe('a socket whose credential is withdrawn', () => {
  it('is told TOKEN_EXPIRED and disconnected at its next event once its access token has expired', async () => {
    const { access_token } = await signIn(server.client('acme'), acme.users.driver.email, acme.users.driver.password);
    const socket = await connect('/driver', access_token);
    const errors = collect<Refused>(socket, 'error');
    expect((await ask<Reply>(socket, 'location', fix())).data).toEqual({ accepted: true });

    server.clock.advance(server.services.config.accessTokenTtlSeconds + 1);
    const reply = await ask<Reply>(socket, 'location', fix());
    expect(reply.code).toBe('TOKEN_EXPIRED');
    await waitFor('the expired socket to be disconnected', () => !socket.connected);
    expect(errors.map((error) => error.code)).toEqual(['TOKEN_EXPIRED']);
  });

  it('is disconnected with INVALID_CREDENTIALS when its API key is revoked, and the other sockets stay', async () => {
    const created = await acme.as.admin.post<{ data: { id: string; api_key: string } }>('/api/application', { name: 'wall screen', role: 'dispatcher' });
    expect(created.status).toBe(201);
    const revoked = await connect('/dispatch', created.body.data.api_key);
    const kept = await connect('/dispatch', acme.keys.dispatcher);
    const errors = collect<Refused>(revoked, 'error');

    const update = await acme.as.admin.put('/api/application', { id: created.body.data.id, is_active: false });
    expect(update.status).toBe(200);
    await waitFor('the revoked socket to be disconnected', () => !revoked.connected);
    expect(errors.map((error) => error.code)).toEqual(['INVALID_CREDENTIALS']);
    expect(kept.connected).toBe(true);
  });

  it('is disconnected with SITE_INACTIVE when its site is deactivated, and the site serves sockets again once reactivated', async () => {
    const operatorUser = await createOperator(server);
    const session = await signIn(server.client(null), operatorUser.email, operatorUser.password);
    const operator = server.client(null).as({ accessToken: session.access_token });
    const socket = await connect('/dispatch', acme.keys.dispatcher);
    const errors = collect<Refused>(socket, 'error');
    expect((await operator.put('/api/site', { id: acme.site.id, is_active: false })).status).toBe(200);
    try {
      await waitFor('the deactivated site\'s socket to be disconnected', () => !socket.connected);
      expect(errors.map((error) => error.code)).toEqual(['SITE_INACTIVE']);
    } finally {
      expect((await operator.put('/api/site', { id: acme.site.id, is_active: true })).status).toBe(200);
    }
    expect((await connect('/dispatch', acme.keys.dispatcher)).connected).toBe(true);
  });

  it('is disconnected when its user signs out of the session the socket was opened with', async () => {
    const session = await signIn(server.client('acme'), acme.users.dispatcher.email, acme.users.dispatcher.password);
    const socket = await connect('/dispatch', session.access_token);
    const errors = collect<Refused>(socket, 'error');
    const signout = await server.client('acme').as({ accessToken: session.access_token }).post('/api/auth/signout', {});
    expect(signout.status).toBeLessThan(300);
    await waitFor('the signed-out socket to be disconnected', () => !socket.connected);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.code).toMatch(/^(INVALID_CREDENTIALS|TOKEN_REVOKED|SESSION_REVOKED)$/);
  });
});
