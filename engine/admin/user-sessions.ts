import type { EntityManager } from '@mikro-orm/postgresql';
import { switchTenant } from '../../persistence/tenant-scope.ts';
import type { AdminScope } from './user.service.ts';

/**
 * Ends a user's sessions: on every site after a password change or the account's deactivation, and then also their
 * outstanding tickets: password-reset links (an older link must not set the password again) and pre-authentications
 * (a sign-in begun with the old password must not finish with a session after it). On `scope`'s site only when just
 * their profile there was deactivated (their other sites are not this site's to end), with the pre-authentications
 * begun on that site's host. The user's own tokens are visible across sites when acting as that user, so the
 * transaction briefly takes their identity.
 */
export async function revokeUserSessions(em: EntityManager, scope: AdminScope, userId: string, reach: 'everywhere' | 'this site' = 'everywhere'): Promise<void> {
  await switchTenant(em, { siteId: scope.siteId, userId, platform: scope.siteId === null });
  const onSite = reach === 'this site' && scope.siteId !== null;
  const where = onSite ? 'user_id = ? and site_id = ?' : 'user_id = ?';
  const params = onSite ? [userId, scope.siteId] : [userId];
  await em.execute(`update refresh_token set revoked_at = now() where ${where} and revoked_at is null`, params);
  await em.execute(`update access_token set is_active = false where ${where} and is_active`, params);
  if (onSite) await em.execute("update auth_ticket set used_at = now() where purpose = 'pre_auth' and user_id = ? and site_id = ? and used_at is null", params);
  else await voidTickets(em, userId);
}

/**
 * Voids a user's outstanding tickets, reset links and unfinished sign-ins alike, on every site: after their email
 * changes, a link mailed to the old address must not set the password of the account the new address now names.
 * Takes the user's identity for the rest of the transaction, as {@link revokeUserSessions} does.
 */
export async function voidUserTickets(em: EntityManager, scope: AdminScope, userId: string): Promise<void> {
  await switchTenant(em, { siteId: scope.siteId, userId, platform: scope.siteId === null });
  await voidTickets(em, userId);
}

async function voidTickets(em: EntityManager, userId: string): Promise<void> {
  await em.execute('update auth_ticket set used_at = now() where user_id = ? and used_at is null', [userId]);
}

/**
 * Ends the sessions signed in on one profile of a site (a customer profile switched off). Only that profile's: the
 * same user's staff sessions on the site stay, or a dispatcher could sign the site's admin out by giving them a
 * customer profile and switching it off. A site's own tokens are visible in its scope, so no identity switch.
 */
export async function revokeProfileSessions(em: EntityManager, siteId: string, profileId: string): Promise<void> {
  await em.execute('update refresh_token set revoked_at = now() where site_id = ? and profile_id = ? and revoked_at is null', [siteId, profileId]);
  await em.execute('update access_token set is_active = false where site_id = ? and profile_id = ? and is_active', [siteId, profileId]);
}
