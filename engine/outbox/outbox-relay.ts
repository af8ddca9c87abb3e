import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../clock.ts';
import { createBatchRelay } from '../queue/batch-relay.ts';
import type { DurableQueue, JsonValue } from '../queue/durable-queue.ts';
import { inBatchTransaction } from '../runtime/batch-transaction.ts';
import { platformOf } from '../runtime/direct-execute.ts';
import { WEBHOOKS_QUEUE } from '../webhooks/delivery-job.ts';
import { ACTIVE_SUBSCRIPTIONS_OF_SITE, webhookDeliveriesFor, type ActiveSubscription } from '../webhooks/relay-fan-out.ts';
import { EVENT_QUEUE_READS, EVENT_QUEUES } from './event-queues.ts';

/**
 * The queue the relay used to add every event to for the webhook fan-out, before it fanned out itself. Nothing adds
 * to it any more; the webhook workers still drain it, so events relayed by an older version are not lost.
 */
export const EVENTS_QUEUE = 'events';

/** Runs of an `events` job before it is failed: with the 2 s exponential backoff, about 68 minutes of retries. */
const EVENT_JOB_ATTEMPTS = 12;

export type OutboxRelayOptions = {
  orm: MikroORM;
  queue: DurableQueue;
  logger: Logger;
  /** Stamps `relayed_at`. */
  clock?: Clock;
  /** How often pending rows are looked for without a kick (ms). Default 1000: kicks carry the normal traffic. */
  pollIntervalMs?: number;
  /** Rows moved per transaction. Default 200. */
  batchSize?: number;
};

export type OutboxRelay = {
  /** Starts polling (and relays what is pending now). */
  start(): void;
  /** Stops polling and kicks; resolves once the pass in flight (if any) has finished its batch. */
  stop(): Promise<void>;
  /** Relays every pending row, batch by batch, in `seq` order; returns how many rows this call moved. */
  relayOnce(): Promise<number>;
  /** Asks for a pass now (coalesced: a burst of kicks costs one pass), so a committed event leaves in milliseconds. */
  kick(): void;
  /**
   * Also hands every relayed batch, in `seq` order, to `listener` once its transaction has committed (the realtime
   * fan-out). Best effort, unlike the queue: a crash between the commit and the call loses the live message, never
   * the webhook. A throwing listener is logged and does not stop the relay.
   */
  onRelayed(listener: RelayedListener): void;
};

/** A relayed outbox row: its envelope `{event, timestamp, data}` and where it belongs. */
export type RelayedEvent = {
  id: string;
  siteId: string;
  event: string;
  entityType: string;
  entityId: string;
  entityVersion: number | null;
  payload: { [key: string]: JsonValue };
};

export type RelayedListener = (events: RelayedEvent[]) => void;

type OutboxRow = {
  id: string;
  site_id: string;
  event: string;
  entity_type: string;
  entity_id: string;
  entity_version: number | null;
  payload: { [key: string]: JsonValue };
};

/** Locks and stamps the next pending rows (`relayed_at`, batch size), with each site's active subscriptions on its first row. */
const MOVE_BATCH = `with moved as (
    update outbox set relayed_at = ?
    where id in (select id from outbox where relayed_at is null order by seq limit ? for update skip locked)
    returning seq, id, site_id, event, entity_type, entity_id, entity_version, payload)
  select m.id, m.site_id, m.event, m.entity_type, m.entity_id, m.entity_version, m.payload,
    case when row_number() over (partition by m.site_id order by m.seq) = 1 then ${ACTIVE_SUBSCRIPTIONS_OF_SITE('m.site_id')} end as subscriptions
  from moved m order by m.seq`;

/**
 * Moves committed outbox rows to the durable queue of each consumer that reads them ({@link EVENT_QUEUES}): job
 * name = the event, job id = the outbox id, data = the envelope `{event, timestamp, data}` plus `outbox_id`,
 * `site_id`, `entity_type`, `entity_id`, `entity_version`; and fans them out into webhook delivery jobs
 * (relay-fan-out.ts). Each batch runs in one platform-scoped transaction that locks its rows (`FOR UPDATE SKIP
 * LOCKED`) and stamps `relayed_at`, then enqueues them in `seq` order and commits. A crash after enqueueing but before
 * the commit re-sends the rows later, and the job ids make that a no-op in the queue: no row is lost or delivered
 * twice.
 *
 * Relays in several processes take turns (a transaction-scoped advisory lock) rather than splitting the rows: two
 * relays sending different batches at once could let a later event of an entity overtake an earlier one.
 * Per-entity order also relies on the command path: an entity's rows are written under its row lock (version check),
 * so their `seq` order is their commit order.
 */
export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { orm, queue, logger } = options;
  const clock = options.clock ?? systemClock;
  const batchSize = options.batchSize ?? 200;
  const listeners: RelayedListener[] = [];

  const relayBatch = async (): Promise<number> => {
    const rows = await moveBatch();
    if (rows.length > 0 && listeners.length > 0) publish(rows);
    return rows.length;
  };

  const publish = (rows: OutboxRow[]): void => {
    const events = rows.map((row) => ({
      id: row.id,
      siteId: row.site_id,
      event: row.event,
      entityType: row.entity_type,
      entityId: row.entity_id,
      entityVersion: row.entity_version,
      payload: row.payload,
    }));
    for (const listener of listeners) {
      try {
        listener(events);
      } catch (error) {
        logger.error({ err: error }, 'a relayed-events listener failed');
      }
    }
  };

  // One statement locks the batch, stamps it relayed and reads the active subscriptions of its sites: the stamp
  // commits only with the adds (a failed add rolls it back), so stamping first is as safe and saves a round trip.
  // The transaction is a batch transaction (no MikroORM one): its BEGIN, platform settings and the relay lock travel
  // with that statement (prepared once the session has sent it), so a pass costs two round trips with its COMMIT.
  const moveBatch = async (): Promise<OutboxRow[]> => {
    let rows: (OutboxRow & { subscriptions: ActiveSubscription[] | null })[] = [];
    await inBatchTransaction(orm, { siteId: null, platform: true }, async (managers, prefix, prepared) => {
      const tx = managers.of(null);
      // The pending rows are found through `outbox_pending_idx` in `seq` order (an index scan). A bitmap scan, which
      // the planner may prefer, visits every row relayed since the last vacuum (each relay leaves a dead entry in
      // that partial index, and only an index scan marks them dead for the next pass): it was a fifth of
      // PostgreSQL's CPU under a steady command load, growing until autovacuum ran.
      prefix.add(`select pg_advisory_xact_lock(hashtext('dispatch.outbox-relay')), set_config('enable_bitmapscan', 'off', true)`);
      const statement = prepared.textFor(platformOf(tx), MOVE_BATCH, [clock.now().toISOString(), batchSize]);
      rows = ((await prefix.run(statement.text)) as { rows: typeof rows }).rows;
      const subscriptions = new Map(rows.filter((row) => row.subscriptions).map((row) => [row.site_id, row.subscriptions!]));
      const deliveries = webhookDeliveriesFor(rows, (siteId) => subscriptions.get(siteId) ?? []);
      // Different queues: no order between them to keep, so their adds overlap (one round trip instead of two).
      await Promise.all([enqueueInOrder(queue, rows, tx), queue.addMany(WEBHOOKS_QUEUE, deliveries, tx)]);
    });
    return rows;
  };

  const relay = createBatchRelay({
    moveBatch: relayBatch,
    batchSize,
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    onError: (error) => logger.error({ err: error }, 'outbox relay pass failed; the rows stay pending for the next pass'),
    onMoved: (moved) => {
      if (moved > 0) logger.debug({ moved }, 'outbox rows relayed');
    },
  });

  return {
    ...relay,
    onRelayed: (listener) => listeners.push(listener),
  };
}

/**
 * Each consumer's queue receives the events of the batch it reads in one bulk add (the queues' adds overlap), in
 * `seq` order (so an entity's events stay in order in every queue): one round trip per queue instead of one per row
 * and queue.
 */
async function enqueueInOrder(queue: DurableQueue, rows: OutboxRow[], tx: EntityManager): Promise<void> {
  await Promise.all(Object.values(EVENT_QUEUES).map((name) => {
    const wanted = rows.filter((row) => EVENT_QUEUE_READS[name](row.event, row.payload.data)).map(toQueuedEvent);
    return wanted.length > 0 ? queue.addMany(name, wanted, tx) : undefined;
  }));
}

/** A relayed row as a consumer's queue job: name = the event, id = the outbox id, data = the envelope and where it belongs. */
function toQueuedEvent(row: OutboxRow) {
  return {
    name: row.event,
    data: {
      ...row.payload,
      outbox_id: row.id,
      site_id: row.site_id,
      entity_type: row.entity_type,
      entity_id: row.entity_id,
      entity_version: row.entity_version,
    } satisfies JsonValue,
    // Retries let a consumer outlive a passing outage (database, Redis) without losing the event: about an hour.
    options: { jobId: row.id, attempts: EVENT_JOB_ATTEMPTS, backoffMs: 2000 },
  };
}
