import { Client } from 'pg';

type Sample = { walBytes: number; checkpoints: number; buffersCheckpoint: number; buffersBackend: number; commits: number };
/** What PostgreSQL did between two samples: WAL written, checkpoints started, buffers written by checkpoints and by backends, commits (whole cluster). */
export type ActivityDelta = Sample;

/**
 * Cluster-wide PostgreSQL counters sampled around each workload, to tell a slower baseline's cause (a checkpoint
 * writing the earlier workloads' pages, more WAL per insert, other databases committing) from the code's.
 */
export async function databaseActivity(url: string): Promise<{ sample(): Promise<{ since(before: { raw: Sample }): ActivityDelta; raw: Sample }>; close(): Promise<void> }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return {
    async sample() {
      const { rows } = await client.query<{ wal: string; checkpoints: string; buffers_checkpoint: string; buffers_backend: string; commits: string }>(
        `select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint as wal,
                checkpoints_timed + checkpoints_req as checkpoints, buffers_checkpoint, buffers_backend,
                (select sum(xact_commit) from pg_stat_database) as commits
           from pg_stat_bgwriter`,
      );
      const row = rows[0]!;
      const raw: Sample = {
        walBytes: Number(row.wal),
        checkpoints: Number(row.checkpoints),
        buffersCheckpoint: Number(row.buffers_checkpoint),
        buffersBackend: Number(row.buffers_backend),
        commits: Number(row.commits),
      };
      return {
        raw,
        since: (before) => ({
          walBytes: raw.walBytes - before.raw.walBytes,
          checkpoints: raw.checkpoints - before.raw.checkpoints,
          buffersCheckpoint: raw.buffersCheckpoint - before.raw.buffersCheckpoint,
          buffersBackend: raw.buffersBackend - before.raw.buffersBackend,
          commits: raw.commits - before.raw.commits,
        }),
      };
    },
    close: () => client.end(),
  };
}
