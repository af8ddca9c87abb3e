import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { sweepHandoffs } from '../outbox/handoff-sweep.ts';
import { createPendingVacuum } from '../outbox/pending-vacuum.ts';
import { sweepRetries } from '../webhooks/retry-sweep.ts';
import { createCoalescedTask } from './coalesced-task.ts';
import type { DurableQueue } from './durable-queue.ts';

export type QueueSweeperOptions = {
  orm: MikroORM;
  /** The BullMQ queue (the table queue commits its jobs in PostgreSQL and needs no sweeper). */
  queue: DurableQueue;
  logger: Logger;
  /** How long a handed-off job or a due retry may stay unfinished before the queue is asked about it (ms). */
  graceMs: number;
  /** Time between two passes (ms). */
  intervalMs: number;
  /** Rows per statement. Default 500. */
  batchSize?: number;
  /** Statements per pass and kind, at most. Default 20: 10,000 hand-offs per pass, far more than a relay makes per interval. */
  maxBatches?: number;
};

/** What one pass did (for logs and tests). */
export type SweepResult = { handoffsChecked: number; handoffsFinished: number; jobsAddedAgain: number; retriesAddedAgain: number };

export type QueueSweeper = {
  start(): void;
  /** Stops the timer; resolves once the pass in flight (if any) has finished. */
  stop(): Promise<void>;
  /** One pass now. */
  sweepOnce(): Promise<SweepResult>;
};

/**
 * Makes PostgreSQL the record of what BullMQ still has to do, so a Redis that loses its data (restarted without
 * persistence, a failover to a replica behind) loses no acknowledged event. Every `intervalMs`, in every server
 * process (the statements skip rows another process holds):
 * - relayed batches (`outbox_handoff`, written by the outbox relay) unfinished after `graceMs`: finished ones are
 *   forgotten, jobs Redis no longer knows are added again under their ids (handoff-sweep.ts);
 * - webhook retries overdue by `graceMs` (`webhook_delivery.retry_due_at`): added again under their ids, a no-op
 *   while Redis still has them (retry-sweep.ts).
 * Consumers are idempotent against PostgreSQL (an earning is recorded once per job; a delivery added again checks
 * the delivery log), so a job run again after Redis lost its completion sends and records nothing twice.
 * Realtime pushes are not covered: they leave the relay straight to the sockets, best effort.
 */
export function createQueueSweeper(options: QueueSweeperOptions): QueueSweeper {
  const { orm, queue, logger, graceMs } = options;
  const batchSize = options.batchSize ?? 500;
  const maxBatches = options.maxBatches ?? 20;
  const vacuum = createPendingVacuum(orm, logger, undefined, 'outbox_handoff');
  let timer: NodeJS.Timeout | null = null;

  const sweepOnce = async (): Promise<SweepResult> => {
    const result: SweepResult = { handoffsChecked: 0, handoffsFinished: 0, jobsAddedAgain: 0, retriesAddedAgain: 0 };
    for (let batch = 0; batch < maxBatches; batch++) {
      const swept = await sweepHandoffs(orm, queue, graceMs, batchSize);
      result.handoffsChecked += swept.checked;
      result.handoffsFinished += swept.finished;
      result.jobsAddedAgain += swept.jobsAddedAgain;
      await vacuum.relayed(swept.finished);
      if (swept.checked < batchSize) break;
    }
    for (let batch = 0; batch < maxBatches; batch++) {
      const swept = await sweepRetries(orm, queue, graceMs, batchSize);
      result.retriesAddedAgain += swept.addedAgain;
      if (swept.checked < batchSize) break;
    }
    if (result.jobsAddedAgain > 0 || result.retriesAddedAgain > 0) {
      logger.warn(result, 'queue sweeper added jobs again that the queue no longer had (Redis lost data)');
    }
    return result;
  };

  const pass = createCoalescedTask(async () => void (await sweepOnce()), (error) => logger.error({ err: error }, 'queue sweep failed; tried again at the next interval'));

  return {
    start() {
      if (timer) return;
      timer = setInterval(() => pass.trigger(), options.intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await pass.stop();
    },
    sweepOnce,
  };
}
