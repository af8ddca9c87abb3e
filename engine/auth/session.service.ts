import type { EntityManager } from '@mikro-orm/postgresql';
import { AccessTokenSchema } from '../../persistence/entities/access-token.entity.ts';
import { OrganizationSchema } from '../../persistence/entities/organization.entity.ts';
import { RefreshTokenSchema } from '../../persistence/entities/refresh-token.entity.ts';
import { SiteSchema } from '../../persistence/entities/site.entity.ts';
import { UserProfileSchema, type UserProfile } from '../../persistence/entities/user-profile.entity.ts';
import { UserSchema, type User } from '../../persistence/entities/user.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { generateToken, hashToken, verifyPassword } from '../../persistence/secrets.ts';
import { switchTenant } from '../../persistence/tenant-scope.ts';
import type { Clock } from '../clock.ts';
import { DomainError } from '../domain-error.ts';
import { consumeTicket, invalidTicket, issueTicket } from './tickets.ts';

export type AuthSettings = { clock: Clock; accessTtlSeconds: number; refreshTtlSeconds: number };

/** A new user session: the tokens are returned once, only their hashes are stored. */
export type IssuedSession = {
  sessionId: string;
  accessTokenId: string;
  accessToken: string;
  refreshToken: string;
  accessExpiresAt: Date;
  refreshExpiresAt: Date;
  siteId: string | null;
  user: User;
  profile: UserProfile | null;
};

export type ProfileChoice = { profile: UserProfile; siteName: string; subdomain: string };

export type SignInResult =
  | { kind: 'session'; session: IssuedSession }
  | { kind: 'pre_auth'; token: string; expiresAt: Date; user: User; choices: ProfileChoice[] };

const PRE_AUTH_TTL_SECONDS = 300;

/**
 * Signs a user in. On a site host with one profile there: a session. On the platform host (unless the user is a
 * platform operator, who gets a platform session) or with several profiles on the site: a pre-authentication to
 * finish with {@link completeSiteSelection}. Wrong email, wrong password, no profile here and a password another
 * site's staff chose all look the same.
 * @throws DomainError 401 INVALID_CREDENTIALS
 */
export async function signIn(
  em: EntityManager,
  settings: AuthSettings,
  siteId: string | null,
  email: string,
  password: string,
): Promise<SignInResult> {
  const user = await em.findOne(UserSchema, { email: email.toLowerCase(), isActive: true, isServiceAccount: false });
  const valid = await verifyPassword(user?.passwordHash, password);
  if (!user || !valid) throw invalidCredentials();
  // A password a site's staff chose signs in on that site only (migration 0039): not on another site's host, and on
  // the platform host it offers that site's profiles alone.
  const setBy = user.passwordSetBySiteId;
  if (setBy !== null && siteId !== null && setBy !== siteId) throw invalidCredentials();
  if (siteId === null && user.isPlatformOperator && setBy === null) {
    return { kind: 'session', session: await issueSession(em, settings, user, null) };
  }
  await switchTenant(em, { siteId, userId: user.id });
  const profiles = await em.find(
    UserProfileSchema,
    { userId: user.id, isActive: true, ...((siteId ?? setBy) ? { siteId: siteId ?? setBy! } : {}) },
    { filters: { site: false }, orderBy: { createdAt: 'asc' } },
  );
  if (profiles.length === 0) throw invalidCredentials();
  if (siteId !== null && profiles.length === 1) {
    return { kind: 'session', session: await issueSession(em, settings, user, profiles[0]!) };
  }
  const ticket = await issueTicket(em, settings.clock, { purpose: 'pre_auth', siteId, userId: user.id, ttlSeconds: PRE_AUTH_TTL_SECONDS });
  return { kind: 'pre_auth', token: ticket.token, expiresAt: ticket.expiresAt, user, choices: await describeChoices(em, profiles) };
}

/**
 * Finishes a pre-authentication by choosing one of the user's profiles; the session belongs to that profile's site.
 * @throws DomainError 401 INVALID_TICKET (also when the account was switched off since), 404 when the profile is not the user's
 */
export async function completeSiteSelection(
  em: EntityManager,
  settings: AuthSettings,
  hostSiteId: string | null,
  token: string,
  profileId: string,
): Promise<IssuedSession> {
  const ticket = await consumeTicket(em, settings.clock, 'pre_auth', token);
  await switchTenant(em, { siteId: hostSiteId, userId: ticket.userId });
  const profile = await em.findOne(UserProfileSchema, { id: profileId, userId: ticket.userId, isActive: true }, { filters: { site: false } });
  if (!profile || (hostSiteId !== null && profile.siteId !== hostSiteId)) throw DomainError.notFound('Profile', profileId);
  // A sign-in on a site's host chooses among that site's profiles only, and a password a site's staff chose leads to
  // that site only (the choice `signIn` offered): a profile id of another site is refused, not merely left unlisted.
  if (ticket.siteId !== null && profile.siteId !== ticket.siteId) throw DomainError.notFound('Profile', profileId);
  // An account switched off since the sign-in began gets no session (its tickets are voided then too; this holds
  // whatever way it was switched off).
  const user = await em.findOne(UserSchema, { id: ticket.userId, isActive: true });
  if (!user) throw invalidTicket();
  if (user.passwordSetBySiteId !== null && profile.siteId !== user.passwordSetBySiteId) throw DomainError.notFound('Profile', profileId);
  return issueSession(em, settings, user, profile);
}

/**
 * Creates a session (a new refresh-token family) for a user on a profile's site, or on the platform (no profile).
 * `sessionId` keeps an existing family when rotating.
 */
export async function issueSession(
  em: EntityManager,
  settings: AuthSettings,
  user: User,
  profile: UserProfile | null,
  sessionId = newId('session'),
): Promise<IssuedSession> {
  await switchTenant(em, { siteId: profile?.siteId ?? null, userId: user.id });
  const session = draftSession(em, settings, user, profile, sessionId);
  await em.flush();
  return session;
}

/**
 * Sessions for several users of one site at once (each on their profile there): their token rows go out in one
 * flush, an insert per table, where a session each costs a tenant switch and two inserts.
 */
export async function issueSiteSessions(em: EntityManager, settings: AuthSettings, siteId: string, holders: { user: User; profile: UserProfile }[]): Promise<IssuedSession[]> {
  await switchTenant(em, { siteId, userId: null });
  const sessions = holders.map(({ user, profile }) => draftSession(em, settings, user, profile, newId('session')));
  await em.flush();
  return sessions;
}

/** A session's token rows, persisted with the next flush. */
function draftSession(em: EntityManager, settings: AuthSettings, user: User, profile: UserProfile | null, sessionId: string): IssuedSession {
  const siteId = profile?.siteId ?? null;
  const now = settings.clock.now().getTime();
  const accessToken = generateToken('access');
  const refreshToken = generateToken('refresh');
  const accessExpiresAt = new Date(now + settings.accessTtlSeconds * 1000);
  const refreshExpiresAt = new Date(now + settings.refreshTtlSeconds * 1000);
  const access = em.create(AccessTokenSchema, {
    id: newId('accessToken'),
    sessionId,
    siteId,
    userId: user.id,
    profileId: profile?.id ?? null,
    applicationId: null,
    tokenHash: hashToken(accessToken),
    expiresAt: accessExpiresAt,
    isActive: true,
  });
  em.create(RefreshTokenSchema, {
    id: newId('refreshToken'),
    sessionId,
    siteId,
    userId: user.id,
    profileId: profile?.id ?? null,
    tokenHash: hashToken(refreshToken),
    expiresAt: refreshExpiresAt,
  });
  return { sessionId, accessTokenId: access.id, accessToken, refreshToken, accessExpiresAt, refreshExpiresAt, siteId, user, profile };
}

/** Ends a session: its refresh family and every access token of it. */
export async function revokeSession(em: EntityManager, sessionId: string): Promise<void> {
  await em.nativeUpdate(RefreshTokenSchema, { sessionId, revokedAt: null }, { revokedAt: new Date() });
  await em.nativeUpdate(AccessTokenSchema, { sessionId, isActive: true }, { isActive: false });
}

async function describeChoices(em: EntityManager, profiles: UserProfile[]): Promise<ProfileChoice[]> {
  // A switched-off organization's sites are switched off with it (SITE_INACTIVE on their hosts): not offered.
  const sites = await em.find(SiteSchema, { id: { $in: profiles.map((p) => p.siteId) }, isActive: true });
  const organizations = await em.find(OrganizationSchema, { id: { $in: [...new Set(sites.map((s) => s.organizationId))] }, isActive: true });
  const usable = sites.filter((site) => organizations.some((o) => o.id === site.organizationId));
  return profiles.flatMap((profile) => {
    const site = usable.find((s) => s.id === profile.siteId);
    return site ? [{ profile, siteName: site.name, subdomain: site.subdomain }] : [];
  });
}

function invalidCredentials(): DomainError {
  return new DomainError(401, 'INVALID_CREDENTIALS', 'The email or password is wrong');
}
