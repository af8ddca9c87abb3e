import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNotificationDelivery, type NotificationDelivery } from '../../engine/notify/start-notification-delivery.ts';
import { createOperator, signIn } from '../support/fixtures.ts';
import { useTwoSites } from '../support/two-sites.ts';
import { waitFor } from '../support/wait-for.ts';

type Data<T = Record<string, unknown>> = { data: T };
type Session = { type: string; access_token: string; refresh_token: string; expires_in: number; context: { site: { subdomain: string } | null; active_profile: { role: string } | null } };
type PreAuth = { type: string; pre_auth_token: string; profiles: { id: string; subdomain: string; role: string }[] };

const sites = useTwoSites();

describe('sign-in', () => {
  it('gives a session with the auth context on a site host', async () => {
    const response = await sites.server.client('acme').post<Data<Session>>('/api/auth/signin', { email: sites.acme.users.dispatcher.email, password: 'password-dispatcher' });
    expect(response.status).toBe(200);
    expect(response.body.data.type).toBe('session');
    expect(response.body.data.access_token).toMatch(/^dat_/);
    expect(response.body.data.refresh_token).toMatch(/^drt_/);
    expect(response.body.data.expires_in).toBe(900);
    expect(response.body.data.context.site?.subdomain).toBe('acme');
    expect(response.body.data.context.active_profile?.role).toBe('dispatcher');
  });

  it('looks the same for a wrong password, an unknown email and a user of another site', async () => {
    const client = sites.server.client('acme');
    const wrong = await client.post('/api/auth/signin', { email: sites.acme.users.admin.email, password: 'nope' });
    const unknown = await client.post('/api/auth/signin', { email: 'ghost@acme.example', password: 'nope' });
    const foreign = await client.post('/api/auth/signin', { email: sites.globex.users.admin.email, password: 'password-admin' });
    for (const response of [wrong, unknown, foreign]) {
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'The email or password is wrong', message: 'The email or password is wrong', code: 'INVALID_CREDENTIALS' });
    }
  });

  it('gives a pre-authentication on the platform host, finished by choosing a site', async () => {
    const response = await sites.server.client(null).post<Data<PreAuth>>('/api/auth/signin', { email: sites.acme.users.driver.email, password: 'password-driver' });
    expect(response.status).toBe(200);
    expect(response.body.data.type).toBe('pre_authentication');
    expect(response.body.data.profiles).toEqual([expect.objectContaining({ subdomain: 'acme', role: 'driver' })]);
    const chosen = await sites.server.client(null).post<Data<Session>>('/api/auth/site', {
      pre_auth_token: response.body.data.pre_auth_token,
      profile_id: response.body.data.profiles[0]!.id,
    });
    expect(chosen.status).toBe(200);
    const me = await sites.server.client('acme').as({ accessToken: chosen.body.data.access_token }).get<Data<{ user: { email: string } }>>('/api/auth/me');
    expect(me.body.data.user.email).toBe(sites.acme.users.driver.email);
    const reuse = await sites.server.client(null).post('/api/auth/site', { pre_auth_token: response.body.data.pre_auth_token, profile_id: response.body.data.profiles[0]!.id });
    expect(reuse.status).toBe(401);
  });

  it('gives a platform operator a platform session on the bare host', async () => {
    const operator = await createOperator(sites.server);
    const session = await signIn(sites.server.client(null), operator.email, operator.password);
    const me = await sites.server.client(null).as({ accessToken: session.access_token }).get<Data<{ site: unknown; user: { is_platform_operator: boolean } }>>('/api/auth/me');
    expect(me.status).toBe(200);
    expect(me.body.data.site).toBeNull();
    expect(me.body.data.user.is_platform_operator).toBe(true);
    const onSite = await sites.server.client('acme').as({ accessToken: session.access_token }).get('/api/auth/me');
    expect(onSite.status).toBe(401);
  });
});

describe('refresh tokens', () => {
  it('rotates: the new pair works and the old refresh token is spent', async () => {
    const client = sites.server.client('acme');
    const session = await signIn(client, sites.acme.users.admin.email, 'password-admin');
    const rotated = await client.post<Data<Session>>('/api/auth/refresh', { refresh_token: session.refresh_token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.refresh_token).not.toBe(session.refresh_token);
    const me = await client.as({ accessToken: rotated.body.data.access_token }).get('/api/auth/me');
    expect(me.status).toBe(200);
  });

  it('lets exactly one of 20 parallel refreshes of one token succeed, and revokes the family on the replays', async () => {
    const client = sites.server.client('acme');
    const session = await signIn(client, sites.acme.users.admin.email, 'password-admin');
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => client.post<Data<Session>>('/api/auth/refresh', { refresh_token: session.refresh_token })),
    );
    const winners = responses.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(responses.filter((r) => r.status === 401).every((r) => (r.body as unknown as { code: string }).code === 'REFRESH_TOKEN_REUSED')).toBe(true);
    const next = await client.post('/api/auth/refresh', { refresh_token: winners[0]!.body.data.refresh_token });
    expect(next.status).toBe(401);
  });

  it('revokes the whole family when a rotated token is replayed', async () => {
    const client = sites.server.client('acme');
    const session = await signIn(client, sites.acme.users.admin.email, 'password-admin');
    const rotated = await client.post<Data<Session>>('/api/auth/refresh', { refresh_token: session.refresh_token });
    const replay = await client.post('/api/auth/refresh', { refresh_token: session.refresh_token });
    expect(replay.status).toBe(401);
    expect(replay.body).toMatchObject({ code: 'REFRESH_TOKEN_REUSED' });
    expect((await client.as({ accessToken: rotated.body.data.access_token }).get('/api/auth/me')).status).toBe(401);
    expect((await client.as({ accessToken: session.access_token }).get('/api/auth/me')).status).toBe(401);
    expect((await client.post('/api/auth/refresh', { refresh_token: rotated.body.data.refresh_token })).status).toBe(401);
  });

  it("refuses a site's refresh token on another site's host", async () => {
    const session = await signIn(sites.server.client('acme'), sites.acme.users.admin.email, 'password-admin');
    const response = await sites.server.client('globex').post('/api/auth/refresh', { refresh_token: session.refresh_token });
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ code: 'INVALID_REFRESH_TOKEN' });
  });
});

describe('session lifetime', () => {
  it('expires access tokens after ACCESS_TOKEN_TTL_SECONDS', async () => {
    const client = sites.server.client('acme');
    const session = await signIn(client, sites.acme.users.customer.email, 'password-customer');
    expect((await client.as({ accessToken: session.access_token }).get('/api/auth/me')).status).toBe(200);
    sites.server.clock.advance(901);
    const expired = await client.as({ accessToken: session.access_token }).get('/api/auth/me');
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({ code: 'TOKEN_EXPIRED' });
    const refreshed = await client.post<Data<Session>>('/api/auth/refresh', { refresh_token: session.refresh_token });
    expect(refreshed.status).toBe(200);
  });

  it('signs out: the access and refresh tokens stop working at once', async () => {
    const client = sites.server.client('acme');
    const session = await signIn(client, sites.acme.users.admin.email, 'password-admin');
    expect((await client.as({ accessToken: session.access_token }).post('/api/auth/signout')).status).toBe(200);
    expect((await client.as({ accessToken: session.access_token }).get('/api/auth/me')).status).toBe(401);
    expect((await client.post('/api/auth/refresh', { refresh_token: session.refresh_token })).status).toBe(401);
  });
});

describe('password reset', () => {
  type Mail = { recipient: string; body: string };
  // The reset mail leaves from the password-resets queue's worker, which notification delivery runs.
  let delivery: NotificationDelivery;
  beforeAll(async () => {
    delivery = await startNotificationDelivery(sites.server.services, { pollIntervalMs: 50 });
  });
  afterAll(() => delivery.close());

  /** The recipient's mail, once `count` messages are there (the worker mails after the 202). */
  async function mailbox(recipient: string, count = 1): Promise<Mail[]> {
    const operator = await createOperator(sites.server, `op-${Date.now()}@platform.example`);
    const session = await signIn(sites.server.client(null), operator.email, operator.password);
    const read = async () => (await sites.server.client(null).as({ accessToken: session.access_token }).get<{ data: Mail[] }>(`/api/mailbox?site_id=${sites.acme.site.id}&recipient=${recipient}`)).body.data;
    return waitFor(`${count} mails to ${recipient}`, async () => {
      const mails = await read();
      return mails.length >= count ? mails : null;
    });
  }

  it('answers the same for a known and an unknown email, and only mails the known one', async () => {
    const client = sites.server.client('acme');
    const known = await client.post('/api/auth/password/reset', { email: sites.acme.users.customer.email });
    const unknown = await client.post('/api/auth/password/reset', { email: 'nobody@acme.example' });
    expect(known.status).toBe(202);
    expect(unknown.status).toBe(202);
    expect(known.body).toEqual(unknown.body);
    expect(await mailbox(sites.acme.users.customer.email)).toHaveLength(1);
    expect(await mailbox('nobody@acme.example', 0)).toHaveLength(0);
  });

  it('sets a new password with the mailed token and ends the old sessions', async () => {
    const client = sites.server.client('acme');
    const old = await signIn(client, sites.acme.users.dispatcher.email, 'password-dispatcher');
    await client.post('/api/auth/password/reset', { email: sites.acme.users.dispatcher.email });
    const [mail] = await mailbox(sites.acme.users.dispatcher.email);
    const token = /dtk_[A-Za-z0-9_-]+/.exec(mail!.body)![0];
    const short = await client.post('/api/auth/password/confirm', { token, new_password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ field: 'new_password' }] });
    const confirmed = await client.post('/api/auth/password/confirm', { token, new_password: 'a much better password' });
    expect(confirmed.status).toBe(200);
    expect((await client.as({ accessToken: old.access_token }).get('/api/auth/me')).status).toBe(401);
    expect((await client.post('/api/auth/signin', { email: sites.acme.users.dispatcher.email, password: 'password-dispatcher' })).status).toBe(401);
    await signIn(client, sites.acme.users.dispatcher.email, 'a much better password');
    const reused = await client.post('/api/auth/password/confirm', { token, new_password: 'another password' });
    expect(reused.status).toBe(401);
  });

  it('voids every outstanding reset link once a password is set: an older mail cannot set it again', async () => {
    const client = sites.server.client('acme');
    const email = sites.acme.users.driver.email;
    for (let i = 0; i < 2; i++) await client.post('/api/auth/password/reset', { email });
    const [older, newer] = (await mailbox(email, 2)).map((mail) => /dtk_[A-Za-z0-9_-]+/.exec(mail.body)![0]);
    expect((await client.post('/api/auth/password/confirm', { token: newer, new_password: 'the chosen password' })).status).toBe(200);
    expect((await client.post('/api/auth/password/confirm', { token: older, new_password: 'an attacker password' })).status).toBe(401);
    await signIn(client, email, 'the chosen password');
    // So does a password set by an admin.
    await client.post('/api/auth/password/reset', { email });
    const pending = /dtk_[A-Za-z0-9_-]+/.exec((await mailbox(email, 3)).at(-1)!.body)![0];
    expect((await sites.acme.as.admin.put('/api/user', { id: sites.acme.users.driver.id, password: 'set by the admin' })).status).toBe(200);
    expect((await client.post('/api/auth/password/confirm', { token: pending, new_password: 'an attacker password' })).status).toBe(401);
  });
});

describe('deactivating a profile', () => {
  it("ends the user's sessions on that site only: their sessions on another site go on", async () => {
    const both = { email: 'two-sites@example.com', password: 'two-sites-password' };
    const created = await sites.acme.as.admin.post<{ data: { id: string } }>('/api/user', { ...both, role: 'dispatcher', first_name: 'Tess' });
    expect(created.status).toBe(201);
    // The same account joins globex (the platform adds the profile, and sets a password of its own: one that acme's
    // staff chose signs in on acme only).
    const operator = await createOperator(sites.server, `op-two-${Date.now()}@platform.example`);
    const platform = sites.server.client(null).as({ accessToken: (await signIn(sites.server.client(null), operator.email, operator.password)).access_token });
    expect((await platform.put('/api/user', { id: created.body.data.id, role: 'dispatcher', site_id: sites.globex.site.id, password: both.password })).status).toBe(200);
    const onGlobex = await signIn(sites.server.client('globex'), both.email, both.password);
    const onAcme = await signIn(sites.server.client('acme'), both.email, both.password);
    expect((await sites.acme.as.admin.put('/api/user', { id: created.body.data.id, is_active: false })).status).toBe(200);
    expect((await sites.server.client('acme').as({ accessToken: onAcme.access_token }).get('/api/auth/me')).status).toBe(401);
    expect((await sites.server.client('globex').as({ accessToken: onGlobex.access_token }).get('/api/auth/me')).status).toBe(200);
  });
});
