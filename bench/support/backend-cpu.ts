import type { MikroORM } from '@mikro-orm/postgresql';
import { schedstatOf } from './schedstat.ts';

/** Each backend of the bench database (its pid) with its CPU so far, in ns. */
export type BackendCpu = Map<number, number>;

/**
 * The CPU of every backend connected to the bench's database, from `/proc/<pid>/schedstat` (the server runs on this
 * machine): the command path's connections and the outbox relay's alike, so a series' PostgreSQL time per dispatch
 * is the difference of two readings over its length, which the Node side's CPU figure leaves out.
 */
export async function readBackendCpu(orm: MikroORM): Promise<BackendCpu> {
  const rows = await orm.em.fork().execute<{ pid: number }[]>('select pid from pg_stat_activity where datname = current_database()');
  return new Map(rows.map(({ pid }) => [pid, schedstatOf(`/proc/${pid}/schedstat`).cpu]));
}

/** Milliseconds of backend CPU between two readings (a backend that connected meanwhile counts from zero; one that left is not counted). */
export function backendCpuMsSince(before: BackendCpu, after: BackendCpu): number {
  let ns = 0;
  for (const [pid, cpu] of after) ns += cpu - (before.get(pid) ?? 0);
  return ns / 1e6;
}
