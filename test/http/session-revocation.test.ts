import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNotificationDelivery, type NotificationDelivery } from '../../engine/notify/start-notification-delivery.ts';
import { UserSchema } from '../../persistence/entities/user.entity.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createOperator, signIn } from '../support/fixtures.ts';
import { useTwoSites } from '../support/two-sites.ts';
import { waitFor } from '../support/wait-for.ts';

// What ends a user's sessions also ends what would become one: a sign-in begun before (a pre-authentication), and
// reset links mailed before.

type Data<T> = { data: T };
type PreAuth = { type: string; pre_auth_token: string; profiles: { id: string; role: string }[] };

const sites = useTwoSites();
const INVALID_TICKET = { code: 'INVALID_TICKET', message: 'The token is unknown, used or expired' };
let serial = 0;
// Reset mail leaves from the password-resets queue's worker, which notification delivery runs.
let delivery: NotificationDelivery;
beforeAll(async () => {
  delivery = await startNotificationDelivery(sites.server.services, { pollIntervalMs: 50 });
});
afterAll(() => delivery.close());

/** A new acme user with a role, so each test changes its own account. */
async function acmeUser(role: string): Promise<{ id: string; email: string; password: string }> {
  const person = { email: `revoked-${++serial}-${Date.now()}@acme.example`, password: 'the first password' };
  const created = await sites.acme.as.admin.post<Data<{ id: string }>>('/api/user', { ...person, role });
  expect(created.status).toBe(201);
  return { id: created.body.data.id, ...person };
}

/** Signs in on the platform host: a pre-authentication, finished later with the returned profile. */
async function beginSignIn(user: { email: string; password: string }): Promise<{ token: string; profileId: string }> {
  const response = await sites.server.client(null).post<Data<PreAuth>>('/api/auth/signin', { email: user.email, password: user.password });
  expect(response.body.data.type).toBe('pre_authentication');
  return { token: response.body.data.pre_auth_token, profileId: response.body.data.profiles[0]!.id };
}

const finishSignIn = (begun: { token: string; profileId: string }) =>
  sites.server.client(null).post('/api/auth/site', { pre_auth_token: begun.token, profile_id: begun.profileId });

async function operatorClient() {
  const operator = await createOperator(sites.server, `op-revoke-${++serial}-${Date.now()}@platform.example`);
  return sites.server.client(null).as({ accessToken: (await signIn(sites.server.client(null), operator.email, operator.password)).access_token });
}

async function resetToken(email: string): Promise<string> {
  expect((await sites.server.client('acme').post('/api/auth/password/reset', { email })).status).toBe(202);
  const platform = await operatorClient();
  const mail = await waitFor(`the reset mail to ${email}`, async () =>
    (await platform.get<Data<{ body: string }[]>>(`/api/mailbox?site_id=${sites.acme.site.id}&recipient=${email}`)).body.data.at(-1));
  return /dtk_[A-Za-z0-9_-]+/.exec(mail.body)![0];
}

describe('a sign-in begun before its sessions were ended', () => {
  it('does not finish after an admin sets a new password', async () => {
    const user = await acmeUser('driver');
    const begun = await beginSignIn(user);
    expect((await sites.acme.as.admin.put('/api/user', { id: user.id, password: 'set by the admin' })).status).toBe(200);
    const finished = await finishSignIn(begun);
    expect(finished.status).toBe(401);
    expect(finished.body).toMatchObject(INVALID_TICKET);
  });

  it('does not finish after the password is reset with a mailed link', async () => {
    const user = await acmeUser('dispatcher');
    const begun = await beginSignIn(user);
    const confirmed = await sites.server.client('acme').post('/api/auth/password/confirm', { token: await resetToken(user.email), new_password: 'the reset password' });
    expect(confirmed.status).toBe(200);
    expect((await finishSignIn(begun)).status).toBe(401);
  });

  it('does not finish after the account is switched off, even once it is switched back on', async () => {
    const user = await acmeUser('driver');
    const begun = await beginSignIn(user);
    const platform = await operatorClient();
    expect((await platform.put('/api/user', { id: user.id, is_active: false })).status).toBe(200);
    expect((await platform.put('/api/user', { id: user.id, is_active: true })).status).toBe(200);
    expect((await finishSignIn(begun)).status).toBe(401);
  });

  it('does not finish for an account switched off by any other means (straight in the database)', async () => {
    const user = await acmeUser('driver');
    const begun = await beginSignIn(user);
    await inTenantScope(sites.server.services.db.orm, { siteId: null, platform: true }, (em) => em.nativeUpdate(UserSchema, { id: user.id }, { isActive: false }));
    const finished = await finishSignIn(begun);
    expect(finished.status).toBe(401);
    expect(finished.body).toMatchObject(INVALID_TICKET);
  });
});

describe('a role change on a site', () => {
  it("ends the sessions of the user's other profiles there, which it switches off: reactivating one brings none back", async () => {
    const user = await acmeUser('dispatcher');
    expect((await sites.acme.as.dispatcher.post('/api/customer', { email: user.email })).status).toBe(201);
    const acme = sites.server.client('acme');
    const begun = await acme.post<Data<PreAuth>>('/api/auth/signin', { email: user.email, password: user.password });
    const customerProfile = begun.body.data.profiles.find((p) => p.role === 'customer')!;
    const asCustomer = await acme.post<Data<{ access_token: string; refresh_token: string }>>('/api/auth/site', { pre_auth_token: begun.body.data.pre_auth_token, profile_id: customerProfile.id });
    expect(asCustomer.status).toBe(200);
    const { access_token, refresh_token } = asCustomer.body.data;
    expect((await acme.as({ accessToken: access_token }).get('/api/auth/me')).status).toBe(200);

    expect((await sites.acme.as.admin.put('/api/user', { id: user.id, role: 'driver' })).status).toBe(200);
    expect((await sites.acme.as.dispatcher.put('/api/customer', { id: user.id, is_active: true })).status).toBe(200);

    expect((await acme.as({ accessToken: access_token }).get('/api/auth/me')).status).toBe(401);
    expect((await acme.post('/api/auth/refresh', { refresh_token })).status).toBe(401);
  });
});

describe('an email change', () => {
  it('voids the reset links mailed to the old address: refused as a used or expired one is', async () => {
    const user = await acmeUser('customer');
    const mailedToOld = await resetToken(user.email);
    const newEmail = `moved-${++serial}-${Date.now()}@acme.example`;
    expect((await sites.acme.as.admin.put('/api/user', { id: user.id, email: newEmail })).status).toBe(200);
    const acme = sites.server.client('acme');
    const refused = await acme.post('/api/auth/password/confirm', { token: mailedToOld, new_password: 'set through the old mail' });
    const used = await acme.post('/api/auth/password/confirm', { token: 'dtk_unknown-or-used', new_password: 'set through the old mail' });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(used.body);
    // The account's owner, at the new address, still resets it.
    expect((await acme.post('/api/auth/password/confirm', { token: await resetToken(newEmail), new_password: 'set through the new mail' })).status).toBe(200);
    await signIn(acme, newEmail, 'set through the new mail');
  });
});
