/**
 * The durable queues that receive every committed outbox event, one per consumer. (Webhooks are not one of them:
 * the relay fans each batch out straight into delivery jobs, see engine/webhooks/relay-fan-out.ts.) The relay adds each event to
 * each queue listed here (job id = the outbox id, so a re-sent batch adds nothing twice), in `seq` order. A consumer
 * with its own queue retries on its own: a failing or slow consumer holds no other one back, and a consumer that no
 * process runs yet loses nothing (its events wait in its queue).
 *
 * To add a consumer: add its queue here (one line) and, in the processes that run it,
 * `queue.process(EVENT_QUEUES.<name>, handler)`. The handler receives `QueuedJob`s whose name is the event and whose
 * data is `{event, timestamp, data, outbox_id, site_id, entity_type, entity_id, entity_version}`; delivery is at least
 * once, so handlers must be idempotent. List only consumers that some process runs: an unconsumed queue grows.
 */
export const EVENT_QUEUES = {
  /** Driver pay for completed jobs (`engine/earnings/record-earning.ts`). */
  earnings: 'events-earnings',
} as const satisfies Record<string, string>;

export type EventQueueName = (typeof EVENT_QUEUES)[keyof typeof EVENT_QUEUES];
