import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { DEFAULT_WORKFLOWS } from '../../machines/default-workflows.ts';
import { validateWorkflow } from '../../machines/validate-workflow.ts';
import { ENTITY_TYPES, type EntityType, type Workflow, type WorkflowStateInputValue, type WorkflowTransitionValue } from '../../machines/workflow.schema.ts';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { WorkflowSchema, type WorkflowRow } from '../../persistence/entities/workflow.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { DomainError } from '../domain-error.ts';
import type { WorkflowLookup } from '../runtime/answer-at-commit.ts';

/** Workflow versions never change once written, so they are cached by id for the life of the process. */
const byIdCache = new Map<string, Workflow>();

export function toWorkflow(row: WorkflowRow): Workflow {
  return { id: row.id, entityType: row.entityType as EntityType, version: row.version, states: row.states, transitions: row.transitions };
}

/**
 * A `workflow` row read as JSON by raw SQL (`to_jsonb(w)`, snake_case) as a workflow, remembered by id like every
 * workflow this module reads.
 */
export function workflowFromJson(row: Record<string, unknown>): Workflow {
  return remember({
    id: String(row.id),
    entityType: row.entity_type as EntityType,
    version: Number(row.version),
    states: row.states as Workflow['states'],
    transitions: row.transitions as Workflow['transitions'],
  });
}

/** Gives a new site its default job, stop and route workflows (version 1). */
export async function createDefaultWorkflows(em: EntityManager, siteId: string, actor: AuditActor): Promise<void> {
  for (const entityType of ENTITY_TYPES) {
    const definition = DEFAULT_WORKFLOWS[entityType];
    writeVersion(em, actor, siteId, entityType, 1, definition.states.map((s) => ({ ...s, id: newId('workflowState') })), definition.transitions);
  }
}

/** The workflow new entities of this type start with. */
export async function currentWorkflow(em: EntityManager, entityType: EntityType): Promise<Workflow> {
  const row = await em.findOne(WorkflowSchema, { entityType, isCurrent: true });
  if (!row) throw DomainError.notFound('Workflow', entityType);
  return remember(toWorkflow(row));
}

/** The workflow version with this id when this process already read or wrote it, without a query. */
export function rememberedWorkflow(id: string): Workflow | undefined {
  return byIdCache.get(id);
}

/** A workflow version by id (an entity keeps the version it started with). */
export async function workflowById(em: EntityManager, id: string): Promise<Workflow> {
  const cached = byIdCache.get(id);
  if (cached) return cached;
  const row = await em.findOneOrFail(WorkflowSchema, { id });
  return remember(toWorkflow(row));
}

/**
 * Workflow versions for code that runs outside any transaction (an answer built after its command committed,
 * `AnswerAtCommit`; a read in one round trip, `tenantRead`): a version this process already knows costs nothing;
 * any other is read in a tenant scope of its own.
 */
export const workflowsOutsideTransaction =
  (orm: MikroORM, siteId: string): WorkflowLookup =>
  async (id) =>
    rememberedWorkflow(id) ?? inTenantScope(orm, { siteId }, (em) => workflowById(em, id));

/**
 * Writes a new version of a site's workflow. States that keep their `id` must be states of this site's current
 * workflow of that type (a foreign or unknown id is refused), each once; states without one get a new id.
 * @throws DomainError 400 INVALID_WORKFLOW naming every field at fault with its reason,
 *   400 UNKNOWN_STATE_ID naming the first `states.<i>.id`
 */
export async function replaceWorkflow(
  em: EntityManager,
  actor: AuditActor,
  siteId: string,
  entityType: EntityType,
  states: WorkflowStateInputValue[],
  transitions: WorkflowTransitionValue[],
): Promise<Workflow> {
  const current = await currentWorkflow(em, entityType);
  const known = new Set(current.states.map((s) => s.id));
  const foreign = states.flatMap((s, i) => (s.id !== undefined && !known.has(s.id) ? [{ id: s.id, field: `states.${i}.id` }] : []));
  if (foreign.length > 0) {
    throw DomainError.invalid('UNKNOWN_STATE_ID', `State ids ${foreign.map((s) => s.id).join(', ')} are not states of this site's ${entityType} workflow`, foreign[0]!.field);
  }
  const problems = validateWorkflow(states, transitions);
  if (problems.length > 0) throw DomainError.invalidFields('INVALID_WORKFLOW', 'The workflow is not usable', problems);
  await em.nativeUpdate(WorkflowSchema, { entityType, isCurrent: true }, { isCurrent: false });
  const row = writeVersion(em, actor, siteId, entityType, current.version + 1, states.map((s) => ({ ...s, id: s.id ?? newId('workflowState') })), transitions, current);
  await em.flush();
  return remember(toWorkflow(row));
}

function writeVersion(
  em: EntityManager,
  actor: AuditActor,
  siteId: string,
  entityType: EntityType,
  version: number,
  states: Workflow['states'],
  transitions: WorkflowTransitionValue[],
  previous?: Workflow,
): WorkflowRow {
  const row = em.create(WorkflowSchema, { id: newId('workflow'), siteId, entityType, version, isCurrent: true, states, transitions, createdByUserId: actor.userId });
  recordAudit(em, actor, {
    siteId,
    action: previous ? 'update' : 'create',
    entityType: 'Workflow',
    entityId: row.id,
    before: previous ? { entity_type: entityType, version: previous.version, states: previous.states, transitions: previous.transitions } : null,
    after: { entity_type: entityType, version, states, transitions },
  });
  return row;
}

function remember(workflow: Workflow): Workflow {
  byIdCache.set(workflow.id, workflow);
  return workflow;
}
