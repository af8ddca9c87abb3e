import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { DEFAULT_ATTEMPTS, DEFAULT_BACKOFF_MS, JOB_RETENTION_SECONDS, type AddJobOptions, type JobInfo, type JsonValue, type NewJob } from './durable-queue.ts';

/** A job a worker has claimed: `attempt` (its started-runs count) is also the run's token for later updates. */
export type ClaimedJob = { id: string; name: string; data: JsonValue; attempt: number };

/**
 * The SQL of the table queue (table `queue_job`, migration 0003). Every statement is one autocommit statement unless
 * the caller passes its own transaction, so no connection is held between statements: PGlite has only one.
 * Times come from the database's clock, shared by every process that uses the table.
 */
export function createQueueJobStore(orm: MikroORM) {
  const execute = <T>(sql: string, params: unknown[], em?: EntityManager, method: 'all' | 'run' = 'all'): Promise<T> =>
    (em ?? orm.em.fork()).execute(sql, params, method) as Promise<T>;

  return {
    /**
     * Inserts the job unless (queue, id) exists: that is the whole dedupe. The due time is taken from
     * `clock_timestamp()`, not `now()`: inside a caller's transaction `now()` is when that transaction began, so jobs
     * added by transactions that waited on each other (the relay's turns) would sort out of their insertion order.
     */
    async insert(queue: string, name: string, data: JsonValue, options: AddJobOptions): Promise<void> {
      await execute(
        `insert into queue_job (queue, id, name, data, run_at, max_attempts, backoff_ms, status, created_at, updated_at)
         values (?, ?, ?, ?::jsonb, clock_timestamp() + ? * interval '1 millisecond', ?, ?, 'waiting', now(), now())
         on conflict (queue, id) do nothing`,
        [queue, options.jobId, name, JSON.stringify(data), options.delayMs ?? 0, options.attempts ?? DEFAULT_ATTEMPTS, options.backoffMs ?? DEFAULT_BACKOFF_MS],
        options.transaction,
      );
    },

    /**
     * {@link insert} for several jobs in one statement, in array order: they share one `clock_timestamp()` (plus
     * each one's delay), and `seq`, given in that order, keeps jobs due at the same time in it.
     */
    async insertMany(queue: string, jobs: readonly NewJob[], transaction?: EntityManager): Promise<void> {
      const rows = jobs.map((job) => ({
        id: job.options.jobId,
        name: job.name,
        data: job.data,
        delay_ms: job.options.delayMs ?? 0,
        max_attempts: job.options.attempts ?? DEFAULT_ATTEMPTS,
        backoff_ms: job.options.backoffMs ?? DEFAULT_BACKOFF_MS,
      }));
      await execute(
        `insert into queue_job (queue, id, name, data, run_at, max_attempts, backoff_ms, status, created_at, updated_at)
         select ?, j.job->>'id', j.job->>'name', j.job->'data',
           t.at + (j.job->>'delay_ms')::float8 * interval '1 millisecond',
           (j.job->>'max_attempts')::int, (j.job->>'backoff_ms')::int, 'waiting', now(), now()
         from (select clock_timestamp() as at) t, jsonb_array_elements(?::jsonb) with ordinality as j(job, ord)
         order by j.ord
         on conflict (queue, id) do nothing`,
        [queue, JSON.stringify(rows)],
        transaction,
      );
    },

    /**
     * Claims up to `limit` due jobs, earliest first, and leases them for `leaseMs`. A job still `active` after its lease
     * ran on a worker that died or hung: it is taken again (one run more than `max_attempts` is allowed, so a crash
     * on the last attempt still gets its run). SKIP LOCKED lets concurrent workers claim disjoint jobs.
     */
    async claim(queue: string, limit: number, leaseMs: number): Promise<ClaimedJob[]> {
      const rows = await execute<{ id: string; name: string; data: JsonValue; attempts_made: number; run_at: Date; seq: string }[]>(
        `update queue_job set status = 'active', attempts_made = attempts_made + 1,
           locked_until = now() + ? * interval '1 millisecond', updated_at = now()
         where (queue, id) in (
           select queue, id from queue_job
           where queue = ? and run_at <= now()
             and (status = 'waiting' or (status = 'active' and locked_until < now() and attempts_made <= max_attempts))
           order by run_at, seq limit ? for update skip locked)
         returning id, name, data, attempts_made, run_at, seq`,
        [leaseMs, queue, limit],
      );
      rows.sort((a, b) => new Date(a.run_at).getTime() - new Date(b.run_at).getTime() || Number(BigInt(a.seq) - BigInt(b.seq)));
      return rows.map((row) => ({ id: row.id, name: row.name, data: row.data, attempt: row.attempts_made }));
    },

    /** Extends a running job's lease; false if the run no longer owns the job (its lease expired and it was retaken). */
    async renewLease(queue: string, job: ClaimedJob, leaseMs: number): Promise<boolean> {
      const result = await execute<{ affectedRows: number }>(
        `update queue_job set locked_until = now() + ? * interval '1 millisecond'
         where queue = ? and id = ? and status = 'active' and attempts_made = ?`,
        [leaseMs, queue, job.id, job.attempt],
        undefined,
        'run',
      );
      return result.affectedRows > 0;
    },

    async complete(queue: string, job: ClaimedJob): Promise<void> {
      await execute(
        `update queue_job set status = 'completed', locked_until = null, updated_at = now()
         where queue = ? and id = ? and status = 'active' and attempts_made = ?`,
        [queue, job.id, job.attempt],
      );
    },

    /** Records a failed run: the job waits out its backoff, or is failed for good when its attempts are used up. */
    async fail(queue: string, job: ClaimedJob, error: string): Promise<void> {
      await execute(
        `update queue_job set
           status = case when attempts_made >= max_attempts then 'failed' else 'waiting' end,
           run_at = case when attempts_made >= max_attempts then run_at
                    else now() + backoff_ms * power(2, attempts_made - 1) * interval '1 millisecond' end,
           locked_until = null, last_error = ?, updated_at = now()
         where queue = ? and id = ? and status = 'active' and attempts_made = ?`,
        [error, queue, job.id, job.attempt],
      );
    },

    /** Finished jobs among `ids` (completed, or failed for good) wait to run again now, their attempts from zero. */
    async rerunFinished(queue: string, ids: readonly string[]): Promise<void> {
      await execute(
        `update queue_job set status = 'waiting', attempts_made = 0, run_at = now(), locked_until = null, updated_at = now()
         where queue = ? and id in (?) and status in ('completed', 'failed')`,
        [queue, ids],
      );
    },

    async get(queue: string, jobId: string): Promise<JobInfo | null> {
      const rows = await execute<{ id: string; name: string; status: JobInfo['status']; attempts_made: number; last_error: string | null }[]>(
        'select id, name, status, attempts_made, last_error from queue_job where queue = ? and id = ?',
        [queue, jobId],
      );
      const row = rows[0];
      return row ? { id: row.id, name: row.name, status: row.status, attemptsStarted: row.attempts_made, lastError: row.last_error } : null;
    },

    /**
     * Fails jobs whose worker died on their extra run (so they stop being retaken forever) and deletes finished jobs
     * past their retention (which also ends their dedupe window, as BullMQ's removeOnComplete/removeOnFail do).
     */
    async maintain(queue: string): Promise<void> {
      await execute(
        `update queue_job set status = 'failed', locked_until = null, updated_at = now(),
           last_error = coalesce(last_error || '; ', '') || 'lease expired: the worker stopped during the run'
         where queue = ? and status = 'active' and locked_until < now() and attempts_made > max_attempts`,
        [queue],
      );
      await execute(
        `delete from queue_job where queue = ? and ((status = 'completed' and updated_at < now() - ? * interval '1 second')
           or (status = 'failed' and updated_at < now() - ? * interval '1 second'))`,
        [queue, JOB_RETENTION_SECONDS.completed, JOB_RETENTION_SECONDS.failed],
      );
    },
  };
}

export type QueueJobStore = ReturnType<typeof createQueueJobStore>;
