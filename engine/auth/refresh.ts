import type { EntityManager } from '@mikro-orm/postgresql';
import { RefreshTokenSchema } from '../../persistence/entities/refresh-token.entity.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { UserSchema } from '../../persistence/entities/user.entity.ts';
import { hashToken } from '../../persistence/secrets.ts';
import { issueSession, revokeSession, type AuthSettings, type IssuedSession } from './session.service.ts';

/** What a refresh did. `reused` and `invalid` are failures whose effects (a revoked family) must still commit. */
export type RefreshOutcome = { kind: 'rotated'; session: IssuedSession } | { kind: 'reused' } | { kind: 'invalid' };

type ClaimedRow = { session_id: string; user_id: string; profile_id: string | null };

/**
 * Rotates a refresh token: the presented token is marked used by one conditional UPDATE, so of any number of
 * concurrent refreshes exactly one wins; the winner gets a new pair in the same family. A token presented after it
 * was used is a replay (stolen, or a client racing itself): the whole family is revoked.
 */
export async function rotateRefreshToken(
  em: EntityManager,
  settings: AuthSettings,
  siteId: string | null,
  token: string,
): Promise<RefreshOutcome> {
  const now = settings.clock.now();
  const tokenHash = hashToken(token);
  const claimed: ClaimedRow[] = await em.execute(
    `update refresh_token set used_at = ?
      where token_hash = ? and site_id is not distinct from ? and used_at is null and revoked_at is null and expires_at > ?
      returning session_id, user_id, profile_id`,
    [now, tokenHash, siteId, now],
  );
  const row = claimed[0];
  if (!row) {
    const known = await em.findOne(RefreshTokenSchema, { tokenHash });
    if (known?.usedAt) {
      await revokeSession(em, known.sessionId);
      return { kind: 'reused' };
    }
    return { kind: 'invalid' };
  }
  const user = await em.findOne(UserSchema, { id: row.user_id, isActive: true });
  const profile = row.profile_id ? await em.findOne(UserProfileSchema, { id: row.profile_id, isActive: true }) : null;
  if (!user || (row.profile_id && !profile)) {
    await revokeSession(em, row.session_id);
    return { kind: 'invalid' };
  }
  return { kind: 'rotated', session: await issueSession(em, settings, user, profile, row.session_id) };
}
