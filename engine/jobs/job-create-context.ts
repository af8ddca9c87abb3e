import type { EntityManager } from '@mikro-orm/postgresql';
import type { Workflow } from '../../machines/workflow.schema.ts';
import type { CustomFieldDataType, CustomFieldOption } from '../../persistence/entities/custom-field-definition.entity.ts';
import type { ZoneGeometry } from '../../persistence/entities/zone.entity.ts';
import type { FieldRule } from '../customfields/custom-field-values.ts';
import { DomainError } from '../domain-error.ts';
import type { KnownCustomer } from '../catalog/customer.service.ts';
import { BANNED_ZONES_JSON, type BannedZone } from '../fleet/zone-rules.ts';
import { rememberedWorkflow, workflowById, workflowFromJson } from '../workflow/workflow.service.ts';

/** What creating a job reads of the site before it writes anything. */
export type JobCreateContext = {
  jobWorkflow: Workflow;
  stopWorkflow: Workflow;
  jobFields: FieldRule[];
  stopFields: FieldRule[];
  /** The site's active banned zones, ordered by id. */
  bannedZones: BannedZone[];
  /** The user the customer email names, when one was looked up and exists. */
  customer: KnownCustomer | null;
};

/** Per site, the job and stop workflow versions last read as current (ids only: the versions are in workflow.service's cache). */
const currentWorkflowIds = new Map<string, [string, string]>();
/** Sites remembered at most; past it the map starts again (a forgotten site's next creation reads its workflows whole). */
const MOST_SITES = 10_000;

function rememberCurrent(siteId: string, ids: [string, string]): void {
  if (currentWorkflowIds.size >= MOST_SITES && !currentWorkflowIds.has(siteId)) currentWorkflowIds.clear();
  currentWorkflowIds.set(siteId, ids);
}

/** A current workflow row as read: whole, or only its id when this process already holds that version (else undefined). */
const versionOf = (found: Record<string, unknown>) => ('states' in found ? workflowFromJson(found) : rememberedWorkflow(String(found.id)));

type FieldRow = { entity_type: string; key: string; data_type: CustomFieldDataType; is_required: boolean; is_active: boolean; options: CustomFieldOption[] };
type CustomerRow = { id: string; is_service_account: boolean; is_active: boolean; profile_active: boolean | null };
type ContextRow = {
  workflows: Record<string, unknown>[];
  fields: FieldRow[];
  zones: { id: string; name: string; geometry: ZoneGeometry }[];
  customer: CustomerRow | null;
};

/**
 * One statement for everything a job creation reads of the site, where the ORM took seven: the current job and stop
 * workflows, the job and stop custom field definitions (in the order `loadDefinitions` gives them), the active
 * banned zones, and the user a customer email names with their customer profile here. Read in the command's own
 * transaction, so it sees what the ORM queries saw (the same rows, under the same row-level security): an edit to
 * any of these applies to the next job, on any process. Which workflow versions are current is read every time, but
 * a version never changes once written (`workflow.service.ts`), so the statement sends a workflow's row only when it
 * is not one of the versions this process last saw current on the site (`currentWorkflowIds`), whose content it
 * already holds: most creations read two ids instead of two whole workflows (a few kilobytes of JSON built by
 * PostgreSQL and parsed here).
 * @param customerEmail lower-cased, or null to look no customer up
 * @throws DomainError 404 when the site has no current job or stop workflow
 */
export async function readJobCreateContext(em: EntityManager, siteId: string, customerEmail: string | null): Promise<JobCreateContext> {
  const [row] = await em.execute<ContextRow[]>(
    `select
      (select coalesce(json_agg(case when w.id in (?, ?) then jsonb_build_object('id', w.id, 'entity_type', w.entity_type) else to_jsonb(w) end), '[]'::json)
        from workflow w where w.site_id = ? and w.is_current and w.entity_type in ('job', 'stop')) as workflows,
      (select coalesce(json_agg(json_build_object('entity_type', c.entity_type, 'key', c.key, 'data_type', c.data_type, 'is_required', c.is_required,
          'is_active', c.is_active, 'options', c.options) order by c.sort_order, c.key), '[]'::json)
        from custom_field_definition c where c.site_id = ? and c.entity_type in ('job', 'stop')) as fields,
      ${BANNED_ZONES_JSON} as zones,
      (select json_build_object('id', u.id, 'is_service_account', u.is_service_account, 'is_active', u.is_active,
          'profile_active', (select p.is_active from user_profile p where p.site_id = ? and p.user_id = u.id and p.role = 'customer' limit 1))
        from app_user u where u.email = ? limit 1) as customer`,
    [...(currentWorkflowIds.get(siteId) ?? [null, null]), siteId, siteId, siteId, siteId, customerEmail],
  );
  const { workflows, fields, zones, customer } = row!;
  const current = (entityType: string) => {
    const found = workflows.find((w) => w.entity_type === entityType);
    if (!found) throw DomainError.notFound('Workflow', entityType);
    return found;
  };
  const [jobRow, stopRow] = [current('job'), current('stop')];
  // Read by the ORM should this process not hold it after all (never expected).
  const jobWorkflow = versionOf(jobRow) ?? (await workflowById(em, String(jobRow.id)));
  const stopWorkflow = versionOf(stopRow) ?? (await workflowById(em, String(stopRow.id)));
  rememberCurrent(siteId, [jobWorkflow.id, stopWorkflow.id]);
  const rules = (entityType: string) =>
    fields.filter((f) => f.entity_type === entityType).map((f) => ({ key: f.key, dataType: f.data_type, isRequired: f.is_required, isActive: f.is_active, options: f.options }));
  return {
    jobWorkflow,
    stopWorkflow,
    jobFields: rules('job'),
    stopFields: rules('stop'),
    bannedZones: zones,
    customer: customer && { id: customer.id, isServiceAccount: customer.is_service_account, isActive: customer.is_active, profileActive: customer.profile_active },
  };
}
