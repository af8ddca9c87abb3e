import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { UserSchema } from '../../persistence/entities/user.entity.ts';
import { hashPassword } from '../../persistence/secrets.ts';
import { revokeUserSessions } from '../admin/user-sessions.ts';
import type { Clock } from '../clock.ts';
import { sendMail } from '../mail/mailbox.ts';
import { consumeTicket, issueTicket } from './tickets.ts';

const RESET_TTL_SECONDS = 3600;

/**
 * Mails a reset token to a user who may sign in here (a profile on this site, or a platform operator on the platform
 * host). Unknown emails do nothing, and the caller answers the same either way, so no one learns who has an account.
 * An account that reaches beyond this site (`account_beyond_site`: a profile elsewhere, a platform operator) is not
 * the site's to reset through its own mail: the site's admins choose its email integration (an SMTP server of theirs)
 * and read its pending messages, so a site that linked another site's admin as its customer would receive the token
 * that sets that admin's password. Such mail goes through the platform's own channel (the mailbox).
 */
export async function requestPasswordReset(
  em: EntityManager,
  clock: Clock,
  site: { id: string; name: string } | null,
  email: string,
  resetUrl: string,
): Promise<void> {
  const user = await em.findOne(UserSchema, { email: email.toLowerCase(), isActive: true, isServiceAccount: false });
  if (!user) return;
  const allowed = site
    ? (await em.count(UserProfileSchema, { userId: user.id, siteId: site.id, isActive: true })) > 0
    : user.isPlatformOperator;
  if (!allowed) return;
  const ticket = await issueTicket(em, clock, { purpose: 'password_reset', siteId: site?.id ?? null, userId: user.id, ttlSeconds: RESET_TTL_SECONDS });
  const shared = site ? (await em.execute<{ shared: boolean }[]>('select account_beyond_site(?, ?) as shared', [user.id, site.id]))[0]?.shared : false;
  await sendMail(em, {
    siteId: site?.id ?? null,
    platformOnly: shared,
    to: user.email,
    subject: `Reset your ${site?.name ?? 'platform'} password`,
    body:
      `Someone asked to reset the password of ${user.email}. If it was you, use this token within an hour:\n\n` +
      `${ticket.token}\n\nor open ${resetUrl}?token=${ticket.token}\n\nIf not, ignore this message.`,
  });
}

/**
 * Sets a new password with a reset token (single use) and ends the user's sessions everywhere.
 * @throws DomainError 401 INVALID_TICKET
 */
export async function confirmPasswordReset(
  em: EntityManager,
  clock: Clock,
  actor: AuditActor,
  siteId: string | null,
  token: string,
  newPassword: string,
): Promise<void> {
  const ticket = await consumeTicket(em, clock, 'password_reset', token);
  const user = await em.findOneOrFail(UserSchema, { id: ticket.userId });
  user.passwordHash = await hashPassword(newPassword);
  // The user chose it (they hold the reset link): good on every site they belong to.
  user.passwordSetBySiteId = null;
  recordAudit(em, { ...actor, userId: user.id }, {
    siteId,
    action: 'password_reset',
    entityType: 'User',
    entityId: user.id,
    before: { password_hash: 'previous' },
    after: { password_hash: 'changed' },
  });
  await em.flush();
  await revokeUserSessions(em, { siteId }, user.id);
}
