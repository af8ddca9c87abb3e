import type { EntityManager } from '@mikro-orm/postgresql';
import { JobSchema, type Job } from '../../persistence/entities/job.entity.ts';
import { containsPattern } from '../admin/patch.ts';
import { parseCustomFieldFilter } from '../customfields/custom-field-values.ts';
import { visibleJobs } from './job-detail.ts';
import type { JobActor } from './job-input.ts';

export type JobFilter = {
  workflow_state_ids?: string[];
  phases?: string[];
  customer_user_id?: string;
  driver_user_id?: string;
  service_type_id?: string;
  created_from?: string;
  created_to?: string;
  completed_from?: string;
  completed_to?: string;
  q?: string;
  /** A JSON object of custom field values that must all match (see parseCustomFieldFilter). */
  custom_fields?: string;
};

/** A [from, to) time range as an ORM condition. */
function range(from?: string, to?: string) {
  return { ...(from ? { $gte: new Date(from) } : {}), ...(to ? { $lt: new Date(to) } : {}) };
}

export type PageRequest = { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> };

/** Jobs the actor may see that match every given filter (time ranges are [from, to)). */
export async function searchJobs(em: EntityManager, actor: JobActor, filter: JobFilter, page: PageRequest): Promise<[Job[], number]> {
  const where: Record<string, unknown> = {
    ...visibleJobs(actor),
    ...(filter.workflow_state_ids?.length ? { workflowStateId: { $in: filter.workflow_state_ids } } : {}),
    ...(filter.phases?.length ? { phase: { $in: filter.phases } } : {}),
    ...(filter.customer_user_id ? { customerUserId: filter.customer_user_id } : {}),
    ...(filter.service_type_id ? { serviceTypeId: filter.service_type_id } : {}),
    ...(filter.created_from || filter.created_to ? { createdAt: range(filter.created_from, filter.created_to) } : {}),
    ...(filter.completed_from || filter.completed_to ? { completedAt: range(filter.completed_from, filter.completed_to) } : {}),
  };
  const customFields = parseCustomFieldFilter(filter.custom_fields);
  if (customFields) {
    where.id = { $in: em.createQueryBuilder(JobSchema, 'cf').select('cf.id').where('cf.custom_fields @> ?::jsonb', [JSON.stringify(customFields)]).getKnexQuery() };
  }
  if (filter.driver_user_id) where.driverUserId = actor.role === 'driver' ? actor.userId : filter.driver_user_id;
  if (filter.q) {
    const pattern = containsPattern(filter.q);
    where.$or = [{ id: filter.q }, { customerNotes: { $ilike: pattern } }, { driverNotes: { $ilike: pattern } }, { paymentMethod: { $ilike: pattern } }];
  }
  return em.findAndCount(JobSchema, where, page);
}
