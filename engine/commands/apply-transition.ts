import type { EntityManager } from '@mikro-orm/postgresql';
import { buildEntityMachine, type ActingRole, type EntityEvent, type EntitySnapshot } from '../../machines/entity-machine.ts';
import { allowedMoves, applyEvent, currentState, persistSnapshot, restoreSnapshot } from '../../machines/entity-snapshot.ts';
import type { PhaseEvent, Workflow } from '../../machines/workflow.schema.ts';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { JobSchema, type Job } from '../../persistence/entities/job.entity.ts';
import { StopSchema, type Stop } from '../../persistence/entities/stop.entity.ts';
import { appendOutbox } from '../../persistence/outbox.ts';
import type { Clock } from '../clock.ts';
import { DomainError } from '../domain-error.ts';
import { toJobData, toStopData } from '../jobs/job-view.ts';
import type { ActorRegistry } from '../runtime/actor-registry.ts';
import { workflowById } from '../workflow/workflow.service.ts';

export type EntityKind = 'job' | 'stop';

/** A move to a named state (`workflow_state_id`), or a phase event mapped to the site's target state. */
export type TransitionRequest = { kind: 'move'; toStateId: string } | { kind: 'phase'; event: PhaseEvent };

export type CommandActor = AuditActor & { role: ActingRole };

/** One command's unit of work: its transaction, who acts, and the actors it touched (cached after commit). */
export type CommandScope = {
  em: EntityManager;
  siteId: string;
  actor: CommandActor;
  clock: Clock;
  registry: ActorRegistry;
  touched: Map<string, { snapshot: EntitySnapshot; version: number; workflowId: string }>;
};

export type Applied = {
  kind: EntityKind;
  entity: Job | Stop;
  workflow: Workflow;
  from: { id: string; key: string; phase: string };
  to: { id: string; key: string; phase: string };
};

/**
 * Applies one transition inside the command's transaction: `can()` first (409 INVALID_TRANSITION naming the
 * current state and the allowed moves, nothing written), then the row update under the optimistic version check,
 * the audit record and the `<kind>:state_change` outbox event.
 * @throws DomainError 404, 400 UNKNOWN_STATE_ID, 409 INVALID_TRANSITION; OptimisticLockError on a version race
 */
export async function applyTransition(
  scope: CommandScope,
  kind: EntityKind,
  id: string,
  request: TransitionRequest,
  notes: { cancellationNotes?: string } = {},
): Promise<Applied> {
  const { em, siteId, actor } = scope;
  const entity: Job | Stop | null =
    kind === 'job' ? await em.findOne(JobSchema, { id, deletedAt: null }) : await em.findOne(StopSchema, { id });
  if (!entity) throw DomainError.notFound(kind === 'job' ? 'Job' : 'Stop', id);
  const workflow = await workflowById(em, entity.workflowId);
  const machine = buildEntityMachine(workflow);
  const cached = scope.registry.get(siteId, id, scope.clock.now().getTime());
  const snapshot = cached && cached.version === entity.version ? cached.snapshot : restoreSnapshot(machine, entity.snapshot);
  const event = toEvent(workflow, kind, request, actor.role, notes);
  const next = applyEvent(machine, snapshot, event);
  const from = currentState(workflow, snapshot);
  if (!next) throw invalidTransition(kind, id, workflow, snapshot, request, actor.role);
  const to = currentState(workflow, next);
  const now = scope.clock.now();
  entity.workflowStateId = to.id;
  entity.phase = to.phase;
  entity.snapshot = persistSnapshot(next);
  if (notes.cancellationNotes !== undefined && to.phase === 'cancelled') entity.cancellationNotes = notes.cancellationNotes;
  if (to.phase === 'completed') entity.completedAt = now;
  if (kind === 'job' && to.phase === 'cancelled') (entity as Job).cancelledAt = now;
  await em.flush();
  recordAudit(em, actor, {
    siteId,
    action: 'state_change',
    entityType: kind === 'job' ? 'Job' : 'Stop',
    entityId: id,
    before: { workflow_state_id: from.id, state: from.key, phase: from.phase, version: entity.version - 1 },
    after: { workflow_state_id: to.id, state: to.key, phase: to.phase, version: entity.version, event: event.type, role: actor.role },
  });
  const data = kind === 'job' ? toJobData(entity as Job, workflow) : toStopData(entity as Stop, workflow, null);
  appendOutbox(em, {
    siteId,
    event: `${kind}:state_change`,
    entityType: kind,
    entityId: id,
    entityVersion: entity.version,
    data: { ...data, previous_workflow_state_id: from.id, previous_phase: from.phase },
    timestamp: now,
  });
  scope.touched.set(id, { snapshot: next, version: entity.version, workflowId: workflow.id });
  return { kind, entity, workflow, from, to };
}

function toEvent(workflow: Workflow, kind: EntityKind, request: TransitionRequest, role: ActingRole, notes: { cancellationNotes?: string }): EntityEvent {
  const facts = { hasCancellationNotes: Boolean(notes.cancellationNotes?.trim()), hasAttachment: false };
  if (request.kind === 'phase') return { type: `${kind}.${request.event}`, role, facts };
  const target = workflow.states.find((s) => s.id === request.toStateId);
  if (!target) {
    throw DomainError.invalid('UNKNOWN_STATE_ID', `${request.toStateId} is not a state of this ${kind}'s workflow`, 'workflow_state_id');
  }
  return { type: 'state.move', to: target.key, role, facts };
}

function invalidTransition(kind: EntityKind, id: string, workflow: Workflow, snapshot: EntitySnapshot, request: TransitionRequest, role: ActingRole): DomainError {
  const current = currentState(workflow, snapshot);
  const allowed = allowedMoves(workflow, snapshot, role);
  const wanted = request.kind === 'phase' ? request.event : (workflow.states.find((s) => s.id === request.toStateId)?.key ?? request.toStateId);
  const list = allowed.length > 0 ? allowed.map((m) => m.key).join(', ') : 'none';
  return new DomainError(409, 'INVALID_TRANSITION', `${kind} ${id} cannot go from ${current.key} to ${wanted} as ${role}; allowed moves: ${list}`, undefined, {
    current_state: current,
    allowed_moves: allowed,
  });
}
