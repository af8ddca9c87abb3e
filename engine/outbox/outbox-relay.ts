import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { createBatchRelay } from '../queue/batch-relay.ts';
import type { DurableQueue, JsonValue } from '../queue/durable-queue.ts';
import { inBatchTransaction } from '../runtime/batch-transaction.ts';
import { platformOf } from '../runtime/direct-execute.ts';
import { ACTIVE_SUBSCRIPTIONS_OF_SITE, type ActiveSubscription } from '../webhooks/relay-fan-out.ts';
import { handoffInsert } from './outbox-handoff.ts';
import { createPendingVacuum } from './pending-vacuum.ts';
import { relayedJobs, type OutboxRow } from './relayed-jobs.ts';

/**
 * The queue the relay used to add every event to for the webhook fan-out, before it fanned out itself. Nothing adds
 * to it any more; the webhook workers still drain it, so events relayed by an older version are not lost.
 */
export const EVENTS_QUEUE = 'events';

export type OutboxRelayOptions = {
  orm: MikroORM;
  queue: DurableQueue;
  logger: Logger;
  /** How often pending rows are looked for without a kick (ms). Default 1000: kicks carry the normal traffic. */
  pollIntervalMs?: number;
  /**
   * Least time between the starts of two passes (ms). Default 25: a kick follows every group commit, and a pass per
   * batch of commands (two round trips and a commit) was about 9% of a job command's CPU (bench:engine, ninth round);
   * under load a relayed event may wait up to this long, when idle it leaves at once.
   */
  minPassGapMs?: number;
  /** Rows moved per transaction. Default 200. */
  batchSize?: number;
  /** Rows relayed between two vacuums of `outbox_pending` (see pending-vacuum.ts). */
  vacuumEveryRows?: number;
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

/**
 * Takes the next pending rows (batch size): deletes their `outbox_pending` entries, oldest `seq` first, and reads the
 * rows by `seq`, with each site's active subscriptions on its first row. The outbox row itself is not written. No
 * `FOR UPDATE SKIP LOCKED`: relays take turns (the advisory lock), and a row lock would write each entry once more
 * before its delete; two deletes of one entry could not both return it anyway. The batch's keys are taken as an array
 * (an init plan, run once) rather than by `seq in (select … limit n)`: given statistics of a nearly empty table (the
 * relay's own vacuum records them while it keeps up), the planner ran that as a nested loop over every pending entry
 * that re-ran the limited scan for each, quadratic in the backlog (bench:engine: 0.77 s per batch of 200 with 7,384
 * pending, the relay falling further behind with every batch). `= any(array)` leaves it no join to choose.
 */
export const MOVE_BATCH = `with moved as (
    delete from outbox_pending where seq = any(array(select seq from outbox_pending order by seq limit ?)) returning seq)
  select o.seq, o.id, o.site_id, o.event, o.entity_type, o.entity_id, o.entity_version, o.payload,
    case when row_number() over (partition by o.site_id order by o.seq) = 1 then ${ACTIVE_SUBSCRIPTIONS_OF_SITE('o.site_id')} end as subscriptions
  from moved m join outbox o on o.seq = m.seq order by o.seq`;

/**
 * Moves committed outbox rows to the durable queue of each consumer that reads them (event-queues.ts): job
 * name = the event, job id = the outbox id, data = the envelope `{event, timestamp, data}` plus `outbox_id`,
 * `site_id`, `entity_type`, `entity_id`, `entity_version`; and fans them out into webhook delivery jobs
 * (relay-fan-out.ts; both in relayed-jobs.ts). Each batch runs in one platform-scoped transaction that deletes its
 * rows' `outbox_pending` entries (migration 0022), then enqueues the rows in `seq` order and commits. A crash before
 * the commit rolls the delete back and the rows are sent again later; the job ids make that a no-op in the queue: no
 * row is lost or delivered twice. Outbox rows are never updated: the table is an append-only log of every event.
 * On BullMQ the commit also records the batch's hand-off (`outbox_handoff`, outbox-handoff.ts), which the queue
 * sweeper (queue-sweeper.ts) keeps until every job of the batch has finished, adding again those Redis lost.
 *
 * Relays in several processes take turns (a transaction-scoped advisory lock) rather than splitting the rows: two
 * relays sending different batches at once could let a later event of an entity overtake an earlier one.
 * Per-entity order also relies on the command path: an entity's rows are written under its row lock (version check),
 * so their `seq` order is their commit order.
 */
export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { orm, queue, logger } = options;
  const batchSize = options.batchSize ?? 200;
  const listeners: RelayedListener[] = [];
  const vacuum = createPendingVacuum(orm, logger, options.vacuumEveryRows);

  const relayBatch = async (): Promise<number> => {
    const rows = await moveBatch();
    if (rows.length > 0 && listeners.length > 0) publish(rows);
    await vacuum.relayed(rows.length);
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

  // One statement takes the batch off the pending table and reads the active subscriptions of its sites: the delete
  // commits only with the adds (a failed add rolls it back), so deleting first is as safe and saves a round trip.
  // The transaction is a batch transaction (no MikroORM one): its BEGIN, platform settings and the relay lock travel
  // with that statement (prepared once the session has sent it), so a pass costs two round trips with its COMMIT.
  const moveBatch = async (): Promise<OutboxRow[]> => {
    let rows: (OutboxRow & { subscriptions: ActiveSubscription[] | null })[] = [];
    await inBatchTransaction(orm, { siteId: null, platform: true }, async (managers, prefix, prepared) => {
      const tx = managers.of(null);
      // Index scans only, whatever the statistics say (autovacuum may be off, and `outbox_pending` is a small table
      // that churns): the oldest entries by the primary key in `seq` order, then each row by the outbox's key (`seq`). A
      // sequential scan of `outbox_pending` reads every dead entry left since the last vacuum, one of `outbox` the
      // whole log; a bitmap scan of the pending entries reads dead ones that an index scan would have marked.
      prefix.add(`select pg_advisory_xact_lock(hashtext('dispatch.outbox-relay')), set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)`);
      const statement = prepared.textFor(platformOf(tx), MOVE_BATCH, [batchSize]);
      rows = ((await prefix.run(statement.text)) as { rows: typeof rows }).rows;
      const subscriptions = new Map(rows.filter((row) => row.subscriptions).map((row) => [row.site_id, row.subscriptions!]));
      const added = relayedJobs(rows, (siteId) => subscriptions.get(siteId) ?? []);
      // Different queues: no order between them to keep, so their adds overlap (one round trip instead of one each).
      await Promise.all(added.map((entry) => queue.addMany(entry.queue, entry.jobs, tx)));
      // BullMQ keeps the jobs in Redis only, which may lose them (a restart without persistence): the batch's hand-off
      // is recorded with the COMMIT (no round trip of its own) until the queue sweeper has seen every job finish.
      const handoff = queue.backend === 'bullmq' ? handoffInsert(rows, subscriptions, added, (value) => prefix.literal(value)) : null;
      if (handoff) prefix.add(handoff);
    });
    return rows;
  };

  const relay = createBatchRelay({
    moveBatch: relayBatch,
    batchSize,
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    minPassGapMs: options.minPassGapMs ?? 25,
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
