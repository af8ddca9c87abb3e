import { isPayableCompletion } from '../earnings/payable-completion.ts';

/**
 * The durable queues that receive committed outbox events, one per consumer. (Webhooks are not one of them: the
 * relay fans each batch out straight into delivery jobs, see engine/webhooks/relay-fan-out.ts.) The relay adds each
 * event a consumer reads ({@link EVENT_QUEUE_READS}) to its queue (job id = the outbox id, so a re-sent batch adds
 * nothing twice), in `seq` order. A consumer with its own queue retries on its own: a failing or slow consumer holds
 * no other one back, and a consumer that no process runs yet loses nothing (its events wait in its queue).
 *
 * To add a consumer: add its queue here (one line), say which events it reads in {@link EVENT_QUEUE_READS} and, in
 * the processes that run it, `queue.process(EVENT_QUEUES.<name>, handler)`. The handler receives `QueuedJob`s whose
 * name is the event and whose data is `{event, timestamp, data, outbox_id, site_id, entity_type, entity_id, entity_version}`; delivery is at least
 * once, so handlers must be idempotent. List only consumers that some process runs: an unconsumed queue grows.
 */
export const EVENT_QUEUES = {
  /** Driver pay for completed jobs (`engine/earnings/record-earning.ts`). */
  earnings: 'events-earnings',
} as const satisfies Record<string, string>;

export type EventQueueName = (typeof EVENT_QUEUES)[keyof typeof EVENT_QUEUES];

/**
 * The events each consumer reads (by name and the envelope's `data`): the relay adds only these to its queue, so a
 * consumer pays no queue job for the events it would skip. Share the predicate with the handler's own check.
 */
export const EVENT_QUEUE_READS: Record<EventQueueName, (event: string, data: unknown) => boolean> = {
  // createEarningsConsumer acts on a job completed with a driver only: not on the other moves of a job's day.
  [EVENT_QUEUES.earnings]: isPayableCompletion,
};
