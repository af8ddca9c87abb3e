import type { EntityManager } from '@mikro-orm/postgresql';

/** What a job carries: stored as JSON (Redis or PostgreSQL) and handed back parsed. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type AddJobOptions = {
  /**
   * The dedupe key: adding a job whose id is already in the queue (waiting, running, or finished within
   * {@link JOB_RETENTION_SECONDS}) does nothing. Must not be a plain integer nor contain `:` (BullMQ's rules, enforced
   * on both backends so code behaves the same on either).
   */
  jobId: string;
  /** Run no earlier than this many milliseconds from now (wall-clock time, not the engine's injected clock). */
  delayMs?: number;
  /** Total runs before the job is marked failed. Default 1 (no retry). */
  attempts?: number;
  /** Exponential backoff base: after the n-th failed run the job waits `backoffMs * 2^(n-1)` ms. Default 1000. */
  backoffMs?: number;
  /**
   * The caller's open transaction. The table queue writes the job in it, so the job commits or rolls back with the
   * caller's change (and PGlite's single connection is not needed twice). BullMQ cannot join a database transaction
   * and adds at once: callers must tolerate a job whose transaction later rolls back (dedupe by `jobId` helps).
   */
  transaction?: EntityManager;
};

/** One job of {@link DurableQueue.addMany}: its options are {@link AddJobOptions} without the transaction, given once. */
export type NewJob = { name: string; data: JsonValue; options: Omit<AddJobOptions, 'transaction'> };

export type QueuedJob = {
  id: string;
  name: string;
  data: JsonValue;
  /** 1 on the first run, 2 on the first retry, and so on. */
  attempt: number;
};

/**
 * The retries of a job whose work needs the database, Redis or a remote service that may be down for a while: 12 runs
 * with exponential backoff from 2 s (waits of 2, 4, ... 2048 s: 4094 s, about 68 minutes, in all), so that a passing
 * outage costs time, never the work. A job that runs out of attempts is failed; scheduled dispatches and
 * notifications are added again by their sweeps (`requeue`) while their rows are still pending, other work is not.
 */
export const OUTLIVE_OUTAGES = { attempts: 12, backoffMs: 2000 } as const;

/** Runs one job. Throwing (or rejecting) fails this run: the job is retried with backoff while attempts remain. */
export type JobHandler = (job: QueuedJob) => Promise<void>;

export type ProcessOptions = {
  /** Jobs of this queue run at once in this process. Default 1. */
  concurrency?: number;
  /**
   * How long a running job stays reserved for its worker without a renewal (ms; renewed while the handler runs).
   * A job whose process died runs again once this expires, so a short lock recovers faster after a crash; the price
   * is a second run if the event loop stalls longer than the lock. Default 30 000.
   */
  lockMs?: number;
};

export type JobStatus = 'waiting' | 'active' | 'completed' | 'failed';

/** A job as operators and tests see it. `waiting` includes delayed jobs and jobs waiting out a backoff. */
export type JobInfo = { id: string; name: string; status: JobStatus; attemptsStarted: number; lastError: string | null };

/**
 * Durable background work (webhook delivery, notifications, timers, the outbox relay's `events` queue).
 * Whatever the backend: a job survives a process restart, a failed run is retried with exponential backoff up to
 * `attempts`, a delayed job runs at its due time, and adding the same `jobId` twice is a no-op. Delivery is at least
 * once: a run cut off by a crash is run again, so handlers must be idempotent.
 */
export interface DurableQueue {
  readonly backend: 'bullmq' | 'table';
  add(queue: string, name: string, data: JsonValue, options: AddJobOptions): Promise<void>;
  /**
   * Adds `jobs` to one queue in one round trip, in array order (jobs due at the same time run in that order), each
   * deduplicated by its id as {@link add} does. `transaction` is {@link AddJobOptions.transaction}, for all of them.
   */
  addMany(queue: string, jobs: readonly NewJob[], transaction?: EntityManager): Promise<void>;
  /**
   * For sweeps whose rows say the work is still owed (a pending scheduled dispatch past its due time, a pending
   * notification queued long ago): adds each job as {@link addMany} does, and a job of the same id that already
   * finished (completed, or failed for good after its attempts) runs again with its attempts counted from zero. A job
   * waiting or running is left as it is, so calling this while the first job is alive is a no-op.
   */
  requeue(queue: string, jobs: readonly NewJob[]): Promise<void>;
  /** Starts consuming `queue` in this process (once per queue per instance); resolves when the consumer is ready. */
  process(queue: string, handler: JobHandler, options?: ProcessOptions): Promise<void>;
  /** The job's current state, or null if it never existed or was pruned after {@link JOB_RETENTION_SECONDS}. */
  getJob(queue: string, jobId: string): Promise<JobInfo | null>;
  /** {@link getJob}'s status only, without reading the job's data (the queue sweeper asks it of many jobs). */
  jobStatus(queue: string, jobId: string): Promise<JobStatus | null>;
  /** Stops taking jobs, waits for the running ones to finish, and releases connections. Jobs left stay stored. */
  close(): Promise<void>;
}

/**
 * How long finished jobs are kept. A completed job's id still dedupes during this window (long enough for any
 * retrying producer, such as a relay that crashed before marking its rows); failed jobs stay for inspection.
 */
export const JOB_RETENTION_SECONDS = { completed: 24 * 3600, failed: 7 * 24 * 3600 } as const;

export const DEFAULT_ATTEMPTS = 1;
export const DEFAULT_BACKOFF_MS = 1000;

/** Throws on names and options either backend would reject or mangle, so both fail the same way. */
export function assertValidJob(queue: string, options: Omit<AddJobOptions, 'transaction'>): void {
  assertValidQueueName(queue);
  if (!options.jobId || options.jobId.includes(':') || /^\d+$/.test(options.jobId)) {
    throw new Error(`Invalid job id ${JSON.stringify(options.jobId)}: must be non-empty, not an integer, without ':'`);
  }
  if (options.attempts !== undefined && !(Number.isInteger(options.attempts) && options.attempts >= 1)) {
    throw new Error(`Invalid attempts ${options.attempts}: must be an integer >= 1`);
  }
  for (const [key, value] of [['delayMs', options.delayMs], ['backoffMs', options.backoffMs]] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) throw new Error(`Invalid ${key} ${value}: must be >= 0`);
  }
}

export function assertValidQueueName(queue: string): void {
  if (!/^[A-Za-z0-9_.-]+$/.test(queue)) throw new Error(`Invalid queue name ${JSON.stringify(queue)}: use letters, digits, '_', '.', '-'`);
}

/** The text kept as a failed run's last error. */
export function describeError(error: unknown): string {
  const text = error instanceof Error ? error.message || error.name : String(error);
  return text.slice(0, 2000);
}
