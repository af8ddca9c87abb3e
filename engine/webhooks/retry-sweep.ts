import type { MikroORM } from '@mikro-orm/postgresql';
import type { DurableQueue, JsonValue } from '../queue/durable-queue.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { deliveryJob, envelopeOfOutbox, WEBHOOKS_QUEUE } from './delivery-job.ts';

type OverdueRetry = {
  site_id: string;
  subscription_id: string;
  event_id: string;
  event: string;
  /** The failed attempt: the retry is attempt + 1. */
  attempt: number;
  payload: { [key: string]: JsonValue } | null;
  created_at: Date | null;
};

/**
 * One batch of the queue sweeper's work on webhook retries. A failed attempt records when its retry is due
 * (`webhook_delivery.retry_due_at`, cleared when the retry's own attempt is recorded); a retry overdue by `graceMs`
 * has not run, and its job may be gone with Redis. Takes up to `limit` of them (oldest first; `for update skip
 * locked` and the due time moved to now keep two sweepers off the same rows, and bring a retry whose job is still
 * queued back only after another grace period) and adds again, under its id, each retry's job the queue no longer
 * knows. The body is serialized again from the outbox row, as the relay did (the same bytes); the job is marked
 * `resumed`, so it is checked against the delivery log before it is sent.
 *
 * @returns how many overdue retries it took, and how many of their jobs it added again
 */
export async function sweepRetries(orm: MikroORM, queue: DurableQueue, graceMs: number, limit: number): Promise<{ checked: number; addedAgain: number }> {
  const overdue = await inTenantScope(orm, { siteId: null, platform: true }, (em) =>
    em.execute<OverdueRetry[]>(
      `with due as (
         update webhook_delivery d set retry_due_at = now()
         from (select id from webhook_delivery where retry_due_at <= now() - make_interval(secs => ?) order by retry_due_at limit ? for update skip locked) o
         where d.id = o.id
         returning d.site_id, d.subscription_id, d.event_id, d.event, d.attempt)
       select due.*, x.payload, x.created_at from due left join outbox x on x.id = due.event_id`,
      [graceMs / 1000, limit],
    ),
  );
  const jobs = overdue.flatMap((retry) => {
    // An event whose outbox row is gone cannot be sent again (its body was never stored elsewhere).
    if (!retry.payload || !retry.created_at) return [];
    return [deliveryJob({
      event_id: retry.event_id,
      event: retry.event,
      site_id: retry.site_id,
      subscription_id: retry.subscription_id,
      body: envelopeOfOutbox(retry.event_id, retry.event, retry.payload),
      attempt: retry.attempt + 1,
      // The event's commit: a subscription switched off after it does not receive it (the README's rule).
      queued_at: new Date(retry.created_at).toISOString(),
      ping: false,
      resumed: true,
    })];
  });
  const statuses = await Promise.all(jobs.map((job) => queue.jobStatus(WEBHOOKS_QUEUE, job.options.jobId)));
  const lost = jobs.filter((_, i) => statuses[i] === null);
  // The id dedupes again in the queue: a job that came back meanwhile is not added twice.
  if (lost.length > 0) await queue.addMany(WEBHOOKS_QUEUE, lost);
  return { checked: overdue.length, addedAgain: lost.length };
}
