import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { UserSchema } from '../../persistence/entities/user.entity.ts';
import { hashPassword } from '../../persistence/secrets.ts';
import { revokeUserSessions } from '../admin/user-sessions.ts';
import type { Clock } from '../clock.ts';
import { sendMail } from '../mail/mailbox.ts';
import { hasEmailIntegration } from '../notify/send-notification.ts';
import { consumeTicket, issueTicket } from './tickets.ts';

const RESET_TTL_SECONDS = 3600;

/**
 * Mails a reset token to a user who may sign in here (a profile on this site, or a platform operator on the platform
 * host). Unknown emails do nothing. Runs on the `password-resets` queue's worker (`password-reset-queue.ts`), not in
 * the request, whose answer then takes the same time either way, so no one learns who has an account.
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
  await sendMail(em, {
    siteId: site?.id ?? null,
    platformOnly: site !== null && (await accountBeyondSite(em, user.id, site.id)),
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
  // Whoever held the link chose it. Through the platform's mailbox that is the user: good on every site they belong
  // to. Through a site's own email integration (its admins choose the server and read pending messages) the site's
  // staff may have: good on that site only, as a password they set (migration 0039).
  user.passwordSetBySiteId = await siteMailCarriedReset(em, ticket.siteId ?? null, user.id);
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

/** Whether the account reaches beyond the site (migration 0036): a profile elsewhere, a platform operator or a key's. */
async function accountBeyondSite(em: EntityManager, userId: string, siteId: string): Promise<boolean> {
  const [row] = await em.execute<{ shared: boolean }[]>('select account_beyond_site(?, ?) as shared', [userId, siteId]);
  return row?.shared === true;
}

/** The site whose own email integration carried a reset link of this site's (`requestPasswordReset`'s choice), or null. */
async function siteMailCarriedReset(em: EntityManager, siteId: string | null, userId: string): Promise<string | null> {
  if (siteId === null || !(await hasEmailIntegration(em, siteId)) || (await accountBeyondSite(em, userId, siteId))) return null;
  return siteId;
}
