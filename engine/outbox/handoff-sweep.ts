import type { MikroORM } from '@mikro-orm/postgresql';
import type { DurableQueue } from '../queue/durable-queue.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import type { OutboxHandoff } from './outbox-handoff.ts';
import { relayedJobs, type OutboxRow } from './relayed-jobs.ts';

/** What one pass over the due hand-offs did. */
export type HandoffSweep = { checked: number; finished: number; jobsAddedAgain: number };

type HandoffRow = OutboxHandoff & { first_seq: string };

/**
 * One batch of the queue sweeper's work on `outbox_handoff`: takes up to `limit` hand-offs last checked at least
 * `graceMs` ago (oldest first; `for update skip locked` and the new `checked_at` keep two sweepers off the same rows),
 * asks the queue for each of their jobs, then:
 * - every job finished (completed, or failed for good and kept for inspection): the hand-off is deleted;
 * - a job the queue does not know (Redis lost it): the batch's jobs are built again from its outbox rows and the
 *   subscriptions the relay used, under the same ids, and the missing ones added (webhook batches marked `resumed`,
 *   so their events are checked against the delivery log first);
 * - otherwise (still waiting or running) the hand-off is looked at again after another grace period.
 * A job added again takes the earliest event's commit time as its `queued_at`, the rule the README states: a
 * subscription switched off after an event was committed does not receive it.
 */
export async function sweepHandoffs(orm: MikroORM, queue: DurableQueue, graceMs: number, limit: number): Promise<HandoffSweep> {
  const due = await inTenantScope(orm, { siteId: null, platform: true }, (em) =>
    em.execute<HandoffRow[]>(
      `update outbox_handoff h set checked_at = now()
       from (select first_seq from outbox_handoff where checked_at <= now() - make_interval(secs => ?) order by checked_at limit ? for update skip locked) d
       where h.first_seq = d.first_seq
       returning h.first_seq, h.seqs, h.subscriptions, h.jobs`,
      [graceMs / 1000, limit],
    ),
  );
  if (due.length === 0) return { checked: 0, finished: 0, jobsAddedAgain: 0 };
  const missing = await Promise.all(due.map((handoff) => missingJobs(queue, handoff)));
  const finished = due.filter((_, i) => missing[i] === 'finished').map((handoff) => handoff.first_seq);
  const lost = due.flatMap((handoff, i) => (missing[i] instanceof Set ? [{ handoff, ids: missing[i] }] : []));
  let jobsAddedAgain = 0;
  if (lost.length > 0) jobsAddedAgain = await addAgain(orm, queue, lost);
  if (finished.length > 0) {
    await inTenantScope(orm, { siteId: null, platform: true }, (em) => em.execute('delete from outbox_handoff where first_seq in (?)', [finished]));
  }
  return { checked: due.length, finished: finished.length, jobsAddedAgain };
}

/** `finished` when every job has; else the ids (by queue and id) the queue no longer has, or 'pending' if none. */
async function missingJobs(queue: DurableQueue, handoff: HandoffRow): Promise<'finished' | 'pending' | Set<string>> {
  const jobs = Object.entries(handoff.jobs).flatMap(([name, ids]) => ids.map((id) => ({ name, id })));
  const statuses = await Promise.all(jobs.map((job) => queue.jobStatus(job.name, job.id)));
  if (statuses.every((status) => status === 'completed' || status === 'failed')) return 'finished';
  const lost = new Set(jobs.filter((_, i) => statuses[i] === null).map((job) => jobKey(job.name, job.id)));
  return lost.size > 0 ? lost : 'pending';
}

/** Builds the lost batches' jobs again from their outbox rows and adds the missing ones; returns how many. */
async function addAgain(orm: MikroORM, queue: DurableQueue, lost: { handoff: HandoffRow; ids: Set<string> }[]): Promise<number> {
  const seqs = lost.flatMap((entry) => entry.handoff.seqs.map(String));
  const rows = await inTenantScope(orm, { siteId: null, platform: true }, (em) =>
    em.execute<(OutboxRow & { created_at: Date })[]>(
      `select o.seq::text as seq, o.id, o.site_id, o.event, o.entity_type, o.entity_id, o.entity_version, o.payload, o.created_at
       from outbox o where o.seq in (?) order by o.seq`,
      [seqs],
    ),
  );
  const bySeq = new Map(rows.map((row) => [row.seq, row]));
  let added = 0;
  for (const { handoff, ids } of lost) {
    const batch = handoff.seqs.map(String).flatMap((seq) => bySeq.get(seq) ?? []);
    if (batch.length === 0) continue;
    const queuedAt = new Date(Math.min(...batch.map((row) => new Date(row.created_at).getTime()))).toISOString();
    const rebuilt = relayedJobs(batch, (siteId) => handoff.subscriptions[siteId] ?? [], { queuedAt, resumed: true });
    for (const entry of rebuilt) {
      const jobs = entry.jobs.filter((job) => ids.has(jobKey(entry.queue, job.options.jobId)));
      if (jobs.length === 0) continue;
      // In `seq` order, as the relay added them; an id the queue meanwhile has again is not added twice.
      await queue.addMany(entry.queue, jobs);
      added += jobs.length;
    }
  }
  return added;
}

const jobKey = (queue: string, id: string): string => `${queue}/${id}`;
