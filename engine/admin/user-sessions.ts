import type { EntityManager } from '@mikro-orm/postgresql';
import { switchTenant } from '../../persistence/tenant-scope.ts';
import type { AdminScope } from './user.service.ts';

/**
 * Ends a user's sessions: on every site after a password change or the account's deactivation, and then also their
 * outstanding password-reset links (an older link must not set the password again); on `scope`'s site only when
 * just their profile there was deactivated (their other sites are not this site's to end). The user's own tokens
 * are visible across sites when acting as that user, so the transaction briefly takes their identity.
 */
export async function revokeUserSessions(em: EntityManager, scope: AdminScope, userId: string, reach: 'everywhere' | 'this site' = 'everywhere'): Promise<void> {
  await switchTenant(em, { siteId: scope.siteId, userId, platform: scope.siteId === null });
  const onSite = reach === 'this site' && scope.siteId !== null;
  const where = onSite ? 'user_id = ? and site_id = ?' : 'user_id = ?';
  const params = onSite ? [userId, scope.siteId] : [userId];
  await em.execute(`update refresh_token set revoked_at = now() where ${where} and revoked_at is null`, params);
  await em.execute(`update access_token set is_active = false where ${where} and is_active`, params);
  if (!onSite) await em.execute("update auth_ticket set used_at = now() where user_id = ? and purpose = 'password_reset' and used_at is null", [userId]);
}
