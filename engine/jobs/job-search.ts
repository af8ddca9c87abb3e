import { containsPattern } from '../admin/patch.ts';
import { parseCustomFieldFilter } from '../customfields/custom-field-values.ts';
import type { WorkflowLookup } from '../runtime/answer-at-commit.ts';
import { readPage, type PageRequest } from '../runtime/paged-read.ts';
import type { TenantRead } from '../runtime/tenant-read.ts';
import { detailOfRow, STOPS_COLUMN, visibleTo } from './job-detail-row.ts';
import type { JobActor } from './job-input.ts';
import type { JobData } from './job-view.ts';

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

/** The sortable properties and their columns. */
const SORT_COLUMNS: Record<string, string> = { createdAt: 'created_at', updatedAt: 'updated_at', completedAt: 'completed_at', id: 'id' };

type Conditions = { sql: string[]; params: unknown[] };

/**
 * The page of jobs the actor may see that match every given filter (time ranges are [from, to)), each with its stops
 * and their addresses as the actor sees them, and how many match in all: one statement in one round trip
 * (`readPage`), the stops read for the page only.
 * @throws DomainError 400 INVALID_CUSTOM_FIELD_FILTER
 */
export async function searchJobs(read: TenantRead, workflows: WorkflowLookup, siteId: string, actor: JobActor, filter: JobFilter, page: PageRequest): Promise<[JobData[], number]> {
  const where = conditions(siteId, actor, filter);
  const order = Object.entries(page.orderBy).map(([property, direction]) => `j.${SORT_COLUMNS[property] ?? 'id'} ${direction}`).join(', ');
  const [rows, total] = await readPage(read, siteId, { table: 'job', alias: 'j', columns: `, ${STOPS_COLUMN}`, where: where.sql, params: where.params, order }, page);
  const jobs: JobData[] = [];
  for (const row of rows) jobs.push(await detailOfRow(workflows, actor, row));
  return [jobs, total];
}

/** The filters as conditions on the job aliased `j`, with their values: the site's jobs that the actor may see, not deleted. */
function conditions(siteId: string, actor: JobActor, filter: JobFilter): Conditions {
  const where: Conditions = { sql: ['j.site_id = ?', 'j.deleted_at is null'], params: [siteId] };
  const add = (sql: string, ...params: unknown[]) => {
    where.sql.push(sql);
    where.params.push(...params);
  };
  const visible = visibleTo(actor);
  if (visible) add(visible, actor.userId);
  if (filter.workflow_state_ids?.length) add('j.workflow_state_id in (select jsonb_array_elements_text(?::jsonb))', JSON.stringify(filter.workflow_state_ids));
  if (filter.phases?.length) add('j.phase in (select jsonb_array_elements_text(?::jsonb))', JSON.stringify(filter.phases));
  if (filter.customer_user_id) add('j.customer_user_id = ?', filter.customer_user_id);
  if (filter.service_type_id) add('j.service_type_id = ?', filter.service_type_id);
  if (filter.created_from) add('j.created_at >= ?', new Date(filter.created_from));
  if (filter.created_to) add('j.created_at < ?', new Date(filter.created_to));
  if (filter.completed_from) add('j.completed_at >= ?', new Date(filter.completed_from));
  if (filter.completed_to) add('j.completed_at < ?', new Date(filter.completed_to));
  const customFields = parseCustomFieldFilter(filter.custom_fields);
  if (customFields) add('j.custom_fields @> ?::jsonb', JSON.stringify(customFields));
  // A driver's search is of their own jobs whatever driver it names.
  if (filter.driver_user_id) add('j.driver_user_id = ?', actor.role === 'driver' ? actor.userId : filter.driver_user_id);
  if (filter.q) {
    const pattern = containsPattern(filter.q);
    add('(j.id = ? or j.customer_notes ilike ? or j.driver_notes ilike ? or j.payment_method ilike ?)', filter.q, pattern, pattern, pattern);
  }
  return where;
}
