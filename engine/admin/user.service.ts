import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { AddressSchema, type Address } from '../../persistence/entities/address.entity.ts';
import { OrganizationSchema } from '../../persistence/entities/organization.entity.ts';
import { SiteSchema } from '../../persistence/entities/site.entity.ts';
import { UserProfileSchema, type UserProfile } from '../../persistence/entities/user-profile.entity.ts';
import { UserSchema, type User } from '../../persistence/entities/user.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { hashPassword } from '../../persistence/secrets.ts';
import { DomainError } from '../domain-error.ts';
import { createAddress, type AddressInput } from './address.service.ts';
import { applyPatch, auditSnapshot } from './patch.ts';
import { revokeProfileSessions, revokeUserSessions, voidUserTickets } from './user-sessions.ts';

/** A user as the API shows it: with their profiles (one site's, on a site host) and home address. */
export type UserView = { user: User; profiles: UserProfile[]; homeAddress: Address | null };

/** Where the caller stands: a site's admin (siteId) or the platform operator (siteId null). */
export type AdminScope = { siteId: string | null };

export type CreateUserInput = {
  email: string;
  password?: string;
  first_name?: string;
  last_name?: string;
  display_name?: string;
  phone?: string;
  phone_country?: string;
  role?: string;
  organization_id?: string;
  site_id?: string;
};

const UPDATABLE = {
  first_name: 'firstName',
  last_name: 'lastName',
  display_name: 'displayName',
  phone: 'phone',
  phone_country: 'phoneCountry',
} as const;

/**
 * Creates a user and, with a role, their profile on a site: the host's site for a site admin, `site_id` for the
 * platform operator.
 * @throws DomainError 409 EMAIL_TAKEN, 400 ROLE_REQUIRED / SITE_REQUIRED, 404 for another site's id
 */
export async function createUser(em: EntityManager, actor: AuditActor, scope: AdminScope, input: CreateUserInput): Promise<UserView> {
  const siteId = targetSite(scope, input.site_id);
  if (scope.siteId && !input.role) throw DomainError.invalid('ROLE_REQUIRED', 'role is required to add a user to this site', 'role');
  if (input.role && !siteId) throw DomainError.invalid('SITE_REQUIRED', 'site_id is required with a role', 'site_id');
  const site = siteId ? await em.findOne(SiteSchema, { id: siteId }) : null;
  if (siteId && !site) throw DomainError.notFound('Site', siteId);
  if (!site && input.organization_id && !(await em.findOne(OrganizationSchema, { id: input.organization_id }))) {
    throw new DomainError(404, 'NOT_FOUND', `Organization ${input.organization_id} not found`, 'organization_id');
  }
  const email = input.email.toLowerCase();
  if (await em.count(UserSchema, { email })) throw DomainError.conflict('EMAIL_TAKEN', `A user with the email ${email} exists`);
  const user = em.create(UserSchema, {
    id: newId('user'),
    email,
    passwordHash: input.password ? await hashPassword(input.password) : null,
    // Chosen by this site's staff (the platform's own users excepted): good for signing in here only.
    passwordSetBySiteId: input.password ? scope.siteId : null,
    firstName: input.first_name ?? null,
    lastName: input.last_name ?? null,
    displayName: input.display_name ?? null,
    phone: input.phone ?? null,
    phoneCountry: input.phone_country ?? null,
    organizationId: site?.organizationId ?? input.organization_id ?? null,
    isPlatformOperator: false,
    isServiceAccount: false,
    isActive: true,
  });
  recordAudit(em, actor, { siteId: scope.siteId, action: 'create', entityType: 'User', entityId: user.id, before: null, after: auditSnapshot(user) });
  const profiles = site && input.role ? [addProfile(em, actor, scope, site.id, user.id, input.role)] : [];
  await em.flush();
  return { user, profiles, homeAddress: null };
}

/** @throws DomainError 404 when absent, or without a profile on the caller's site */
export async function getUser(em: EntityManager, scope: AdminScope, id: string): Promise<UserView> {
  const user = await em.findOne(UserSchema, { id });
  const profiles = user ? await profilesOf(em, scope, [user.id]) : [];
  if (!user || (scope.siteId && profiles.length === 0)) throw DomainError.notFound('User', id);
  const homeAddress = user.homeAddressId ? await em.findOne(AddressSchema, { id: user.homeAddressId }) : null;
  return { user, profiles, homeAddress };
}

export type UpdateUserInput = { id: string; email?: string; password?: string; role?: string; site_id?: string; is_active?: boolean; home_address?: AddressInput; home_address_id?: string } & Record<string, unknown>;

/**
 * Updates a user. On a site host, `role` and `is_active` apply to the user's profile on that site; on the platform
 * host `is_active` is the whole account and `role` needs `site_id`. A new password ends the user's sessions.
 * `home_address_id` wins over `home_address`; an empty string clears it.
 */
export async function updateUser(em: EntityManager, actor: AuditActor, scope: AdminScope, input: UpdateUserInput): Promise<UserView> {
  const view = await getUser(em, scope, input.id);
  const { user } = view;
  await assertAccountOwned(em, actor, scope, user.id, input);
  assertNotKeyAccount(user, scope, input);
  const before = auditSnapshot(user);
  applyPatch(user, input, UPDATABLE);
  const email = input.email?.toLowerCase();
  const emailChanged = email !== undefined && email !== user.email;
  if (emailChanged) {
    if (await em.count(UserSchema, { email })) throw DomainError.conflict('EMAIL_TAKEN', `A user with the email ${email} exists`);
    user.email = email;
  }
  if (input.password !== undefined) {
    user.passwordHash = await hashPassword(input.password);
    // Staff set it: good on their site only. The user set it themself: it stays as good as the password they signed
    // in with (a session opened with a password a site's staff know may be theirs), so only a reset link frees it.
    if (actor.userId !== user.id) user.passwordSetBySiteId = scope.siteId;
  }
  await applyHomeAddress(em, actor, scope, user, input);
  if (scope.siteId === null && input.is_active !== undefined) user.isActive = input.is_active;
  recordAudit(em, actor, { siteId: scope.siteId, action: 'update', entityType: 'User', entityId: user.id, before, after: auditSnapshot(user) });
  const switchedOff = await applyProfileChanges(em, actor, scope, user.id, input);
  await em.flush();
  // A new password, or the account switched off (platform), ends every session; a profile switched off, this site's.
  // So do the profiles a role change switched off: ended, not just refused while inactive, else reactivating one
  // would bring its old tokens back to life.
  const endsEverySession = input.password !== undefined || (input.is_active === false && scope.siteId === null);
  if (endsEverySession) await revokeUserSessions(em, scope, user.id);
  else if (input.is_active === false) await revokeUserSessions(em, scope, user.id, 'this site');
  else for (const profile of switchedOff) await revokeProfileSessions(em, profile.siteId, profile.id);
  // A reset link mailed to the old address must stop working (ending every session voided it already).
  if (emailChanged && !endsEverySession) await voidUserTickets(em, scope, user.id);
  return getUser(em, scope, user.id);
}

/**
 * An API key acts with its application's role and state (`PUT /application`), not its service account's profile:
 * a profile change there would answer 200 and leave the key as it was.
 * @throws DomainError 409 SERVICE_ACCOUNT
 */
function assertNotKeyAccount(user: User, scope: AdminScope, input: UpdateUserInput): void {
  const field = input.role !== undefined ? 'role' : input.is_active !== undefined && scope.siteId !== null ? 'is_active' : null;
  if (!user.isServiceAccount || !field) return;
  throw new DomainError(409, 'SERVICE_ACCOUNT', `User ${user.id} is an API key's account: change the key's role or switch it off with PUT /application`, field);
}

/** The fields of the account itself, shared by every site the user belongs to (a profile's role and state are not). */
const ACCOUNT_FIELDS = ['email', 'password', 'first_name', 'last_name', 'display_name', 'phone', 'phone_country', 'home_address', 'home_address_id'] as const;

/**
 * A site changes the account of a user whose first profile is its own (`account_owned_elsewhere`, migration 0040):
 * not of one another site had first (a site that linked another site's admin as its customer), nor of another
 * site's staff (whichever site had them first), nor of a platform
 * operator or an API key's account; the site that had them first still manages its own staff and customers. The
 * user themself, and the platform host, may.
 * @throws DomainError 403 ACCOUNT_SHARED naming the first account field given
 */
async function assertAccountOwned(em: EntityManager, actor: AuditActor, scope: AdminScope, userId: string, input: UpdateUserInput): Promise<void> {
  const field = ACCOUNT_FIELDS.find((name) => input[name] !== undefined);
  if (!field || scope.siteId === null || actor.userId === userId) return;
  const [row] = await em.execute<{ shared: boolean }[]>('select account_owned_elsewhere(?, ?) as shared', [userId, scope.siteId]);
  if (row?.shared) {
    throw new DomainError(403, 'ACCOUNT_SHARED', `User ${userId} belonged elsewhere first (another site, the platform or an API key): only they, that site or the platform change their account`, field);
  }
}

export async function searchUsers(
  em: EntityManager,
  scope: AdminScope,
  filter: { q?: string; role?: string; is_active?: boolean },
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[UserView[], number]> {
  const where: Record<string, unknown> = {};
  if (filter.q) {
    const pattern = `%${filter.q.replaceAll(/[\\%_]/g, (c) => `\\${c}`)}%`;
    where.$or = ['email', 'firstName', 'lastName', 'displayName'].map((field) => ({ [field]: { $ilike: pattern } }));
  }
  if (scope.siteId || filter.role || filter.is_active !== undefined) {
    const profiles = em.createQueryBuilder(UserProfileSchema, 'p').select('p.user_id');
    if (scope.siteId) profiles.andWhere({ siteId: scope.siteId });
    if (filter.role) profiles.andWhere({ role: filter.role });
    if (filter.is_active !== undefined) profiles.andWhere({ isActive: filter.is_active });
    where.id = { $in: profiles.getKnexQuery() };
  }
  const [users, total] = await em.findAndCount(UserSchema, where, { ...page, filters: { site: false } });
  const profiles = await profilesOf(em, scope, users.map((u) => u.id));
  const addressIds = users.map((u) => u.homeAddressId).filter((id): id is string => Boolean(id));
  const addresses = addressIds.length ? await em.find(AddressSchema, { id: { $in: addressIds } }) : [];
  const views = users.map((user) => ({
    user,
    profiles: profiles.filter((p) => p.userId === user.id),
    homeAddress: addresses.find((a) => a.id === user.homeAddressId) ?? null,
  }));
  return [views, total];
}

function targetSite(scope: AdminScope, requested: string | undefined): string | null {
  if (scope.siteId && requested && requested !== scope.siteId) throw DomainError.notFound('Site', requested);
  return scope.siteId ?? requested ?? null;
}

async function profilesOf(em: EntityManager, scope: AdminScope, userIds: string[]): Promise<UserProfile[]> {
  if (userIds.length === 0) return [];
  return scope.siteId
    ? em.find(UserProfileSchema, { userId: { $in: userIds } }, { orderBy: { createdAt: 'asc' } })
    : em.find(UserProfileSchema, { userId: { $in: userIds } }, { orderBy: { createdAt: 'asc' }, filters: { site: false } });
}

function addProfile(em: EntityManager, actor: AuditActor, scope: AdminScope, siteId: string, userId: string, role: string): UserProfile {
  const profile = em.create(UserProfileSchema, { id: newId('profile'), siteId, userId, role, isActive: true });
  recordAudit(em, actor, { siteId: scope.siteId, action: 'create', entityType: 'UserProfile', entityId: profile.id, before: null, after: auditSnapshot(profile) });
  return profile;
}

/**
 * Sets the role or state of the user's profiles on the site. A role change keeps one profile there: the others are
 * switched off. Returns the profiles this switched off (active before, not now), whose sessions the caller ends.
 */
async function applyProfileChanges(em: EntityManager, actor: AuditActor, scope: AdminScope, userId: string, input: UpdateUserInput): Promise<UserProfile[]> {
  const siteId = targetSite(scope, input.site_id);
  const profileActive = scope.siteId ? input.is_active : undefined;
  if (input.role === undefined && profileActive === undefined) return [];
  if (!siteId) throw DomainError.invalid('SITE_REQUIRED', 'site_id is required to change a role', 'site_id');
  // The platform names the site: one that does not exist is a 404, not a profile failing its key at COMMIT.
  if (scope.siteId === null && !(await em.findOne(SiteSchema, { id: siteId }))) throw new DomainError(404, 'NOT_FOUND', `Site ${siteId} not found`, 'site_id');
  // Oldest first: the profile a role change takes is the same every time.
  const profiles = await em.find(UserProfileSchema, { siteId, userId }, { filters: { site: false }, orderBy: { createdAt: 'asc', id: 'asc' } });
  if (profiles.length === 0) {
    if (!input.role) throw DomainError.notFound('Profile of user on site', siteId);
    addProfile(em, actor, scope, siteId, userId, input.role);
    return [];
  }
  const switchedOff: UserProfile[] = [];
  for (const [index, profile] of profiles.entries()) {
    const before = auditSnapshot(profile);
    const wasActive = profile.isActive;
    if (input.role !== undefined && index === 0) profile.role = input.role;
    if (input.role !== undefined && index > 0) profile.isActive = false;
    if (profileActive !== undefined) profile.isActive = profileActive;
    recordAudit(em, actor, { siteId: scope.siteId, action: 'update', entityType: 'UserProfile', entityId: profile.id, before, after: auditSnapshot(profile) });
    if (wasActive && !profile.isActive) switchedOff.push(profile);
  }
  return switchedOff;
}

async function applyHomeAddress(em: EntityManager, actor: AuditActor, scope: AdminScope, user: User, input: UpdateUserInput): Promise<void> {
  if (input.home_address_id !== undefined) {
    if (input.home_address_id === '') {
      user.homeAddressId = null;
      return;
    }
    if (!(await em.findOne(AddressSchema, { id: input.home_address_id }))) throw DomainError.notFound('Address', input.home_address_id);
    user.homeAddressId = input.home_address_id;
    return;
  }
  if (input.home_address) {
    // On the platform host an inline address would be a global one, which every site's staff could find.
    if (scope.siteId === null) throw DomainError.invalid('HOME_ADDRESS_ID_REQUIRED', "On the platform host give home_address_id (a site's address), not an inline home_address", 'home_address');
    user.homeAddressId = (await createAddress(em, actor, scope.siteId, input.home_address)).id;
  }
}
