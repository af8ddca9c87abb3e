import type { EntityManager } from '@mikro-orm/postgresql';
import { AddressSchema } from '../../persistence/entities/address.entity.ts';
import { JobSchema, type Job } from '../../persistence/entities/job.entity.ts';
import { StopSchema, type Stop } from '../../persistence/entities/stop.entity.ts';
import { DomainError } from '../domain-error.ts';
import { workflowById } from '../workflow/workflow.service.ts';
import { isStaff, type JobActor } from './job-input.ts';
import { toJobData, toStopData, type JobData } from './job-view.ts';

/**
 * The jobs an actor may see: staff see the site's jobs, a driver the jobs assigned to them, a customer their own.
 * Deleted jobs are never visible.
 */
export function visibleJobs(actor: JobActor): Record<string, unknown> {
  if (isStaff(actor.role)) return { deletedAt: null };
  if (actor.role === 'driver') return { deletedAt: null, driverUserId: actor.userId };
  return { deletedAt: null, customerUserId: actor.userId };
}

/** @throws DomainError 404 when absent, deleted, another site's, or not visible to this actor */
export async function findVisibleJob(em: EntityManager, actor: JobActor, id: string): Promise<Job> {
  const job = await em.findOne(JobSchema, { id, ...visibleJobs(actor) });
  if (!job) throw DomainError.notFound('Job', id);
  return job;
}

/** Jobs with their stops and stop addresses, in three queries whatever the page size. */
async function withStops(em: EntityManager, jobs: Job[], actor: JobActor): Promise<JobData[]> {
  if (jobs.length === 0) return [];
  const stops = await em.find(StopSchema, { jobId: { $in: jobs.map((j) => j.id) } }, { orderBy: { jobId: 'asc', sortOrder: 'asc' } });
  const addresses = await em.find(AddressSchema, { id: { $in: [...new Set(stops.map((s) => s.addressId))] } });
  const byId = new Map(addresses.map((a) => [a.id, a]));
  const staff = isStaff(actor.role);
  const data: JobData[] = [];
  for (const job of jobs) {
    const jobStops = stops.filter((s) => s.jobId === job.id);
    const stopData = [];
    for (const stop of jobStops) stopData.push(toStopData(stop, await workflowById(em, stop.workflowId), byId.get(stop.addressId) ?? null, staff));
    data.push(toJobData(job, await workflowById(em, job.workflowId), stopData, staff));
  }
  return data;
}

export async function jobDetail(em: EntityManager, actor: JobActor, job: Job): Promise<JobData> {
  const [data] = await withStops(em, [job], actor);
  return data!;
}

/** A stop the actor may see (through its job). */
export async function findVisibleStop(em: EntityManager, actor: JobActor, id: string): Promise<{ stop: Stop; job: Job }> {
  const stop = await em.findOne(StopSchema, { id });
  const job = stop ? await em.findOne(JobSchema, { id: stop.jobId, ...visibleJobs(actor) }) : null;
  if (!stop || !job) throw DomainError.notFound('Stop', id);
  return { stop, job };
}
