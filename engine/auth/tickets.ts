import type { EntityManager } from '@mikro-orm/postgresql';
import { AuthTicketSchema, type AuthTicket, type TicketPurpose } from '../../persistence/entities/auth-ticket.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { generateToken, hashToken } from '../../persistence/secrets.ts';
import type { Clock } from '../clock.ts';
import { DomainError } from '../domain-error.ts';

/** Issues a single-use ticket; the token is returned once, its SHA-256 stored. */
export async function issueTicket(
  em: EntityManager,
  clock: Clock,
  input: { purpose: TicketPurpose; siteId: string | null; userId: string; ttlSeconds: number },
): Promise<{ token: string; expiresAt: Date }> {
  const token = generateToken('ticket');
  const expiresAt = new Date(clock.now().getTime() + input.ttlSeconds * 1000);
  em.create(AuthTicketSchema, {
    id: newId('ticket'),
    purpose: input.purpose,
    siteId: input.siteId,
    userId: input.userId,
    tokenHash: hashToken(token),
    expiresAt,
  });
  await em.flush();
  return { token, expiresAt };
}

/**
 * Marks a ticket used, atomically: of two concurrent uses exactly one wins.
 * @throws DomainError 401 INVALID_TICKET when unknown (here), used, expired or of another purpose
 */
export async function consumeTicket(em: EntityManager, clock: Clock, purpose: TicketPurpose, token: string): Promise<AuthTicket> {
  const now = clock.now();
  const ticket = await em.findOne(AuthTicketSchema, { tokenHash: hashToken(token), purpose });
  const claimed = ticket
    ? await em.nativeUpdate(AuthTicketSchema, { id: ticket.id, usedAt: null, expiresAt: { $gt: now } }, { usedAt: now })
    : 0;
  if (!ticket || claimed !== 1) throw invalidTicket();
  return ticket;
}

/** The one answer for a ticket that cannot be used, whatever the reason: no one learns which. */
export function invalidTicket(): DomainError {
  return new DomainError(401, 'INVALID_TICKET', 'The token is unknown, used or expired');
}
