import type { EntityManager } from '@mikro-orm/postgresql';
import { switchTenant } from '../../persistence/tenant-scope.ts';
import type { AdminScope } from './user.service.ts';

/**
 * Ends every session of a user on every site (after a password change or deactivation). The user's own tokens are
 * visible across sites when acting as that user, so the transaction briefly takes their identity.
 */
export async function revokeUserSessions(em: EntityManager, scope: AdminScope, userId: string): Promise<void> {
  await switchTenant(em, { siteId: scope.siteId, userId, platform: scope.siteId === null });
  await em.execute('update refresh_token set revoked_at = now() where user_id = ? and revoked_at is null', [userId]);
  await em.execute('update access_token set is_active = false where user_id = ? and is_active', [userId]);
}
