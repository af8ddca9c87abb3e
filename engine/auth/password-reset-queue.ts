import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import type { Clock } from '../clock.ts';
import { OUTLIVE_OUTAGES, type DurableQueue, type JobHandler } from '../queue/durable-queue.ts';
import { requestPasswordReset } from './password-reset.ts';

/** The durable queue reset requests wait on until a worker looks the email up, issues the ticket and mails it. */
export const PASSWORD_RESETS_QUEUE = 'password-resets';

/** A reset request as it waits on the queue: the host it came through, the email given and the link to mail. */
export type ResetRequest = { site: { id: string; name: string } | null; email: string; resetUrl: string };

type ResetJobData = { site_id: string | null; site_name: string | null; email: string; reset_url: string };

/**
 * Takes a reset request: only queues it, so the request does the same work whether or not the email belongs to an
 * account (looking it up, issuing a ticket and mailing it took four more round trips for a known one, which the
 * answer's timing gave away). A new job id each time: two requests mail two links, as before.
 */
export async function enqueuePasswordReset(queue: DurableQueue, request: ResetRequest): Promise<void> {
  const data: ResetJobData = { site_id: request.site?.id ?? null, site_name: request.site?.name ?? null, email: request.email, reset_url: request.resetUrl };
  await queue.add(PASSWORD_RESETS_QUEUE, 'reset', data, { jobId: `reset-${randomUUID()}`, ...OUTLIVE_OUTAGES });
}

/**
 * The queue's handler: {@link requestPasswordReset} in the tenant the request came in (the site's host, or the
 * platform host), in one transaction, so a failed run issues nothing and is retried. Delivery is at least once: a
 * run cut off after its commit runs again and mails a second link, each good on its own.
 */
export function createPasswordResetHandler(deps: { orm: MikroORM; clock: Clock }): JobHandler {
  return async (job) => {
    const data = job.data as ResetJobData;
    const site = data.site_id === null ? null : { id: data.site_id, name: data.site_name ?? '' };
    await inTenantScope(deps.orm, { siteId: data.site_id, userId: null }, (em) => requestPasswordReset(em, deps.clock, site, data.email, data.reset_url));
  };
}
