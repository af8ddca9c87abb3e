import type { ActingRole, EntityEvent, EntityMachine, EntitySnapshot } from '../../machines/entity-machine.ts';
import { allowedMoves, currentState, missingRequirements } from '../../machines/entity-snapshot.ts';
import type { Workflow } from '../../machines/workflow.schema.ts';
import { DomainError } from '../domain-error.ts';
import type { EntityKind, TransitionRequest } from './apply-transition.ts';

/**
 * Whether an error is a move the workflow refused (for the role, or for a missing requirement): a parent/child rule
 * that meets one does not apply, rather than failing the command.
 */
export const isRefusedMove = (error: unknown): boolean => error instanceof DomainError && (error.code === 'INVALID_TRANSITION' || error.code === 'REQUIREMENT_NOT_MET');

type RefusedMove = { workflow: Workflow; machine: EntityMachine; snapshot: EntitySnapshot; event: EntityEvent };

/**
 * Why a move was refused: 422 REQUIREMENT_NOT_MET when the workflow has it for this role and only its `requires` is
 * missing (naming what is missing, so the caller knows what to bring), else 409 INVALID_TRANSITION.
 */
export function refusalOf(kind: EntityKind, id: string, refused: RefusedMove, request: TransitionRequest): DomainError {
  const { workflow, machine, snapshot, event } = refused;
  const wanted = request.kind === 'phase' ? request.event : (workflow.states.find((s) => s.id === request.toStateId)?.key ?? request.toStateId);
  const missing = missingRequirements(workflow, machine, snapshot, event);
  if (missing.length === 0) return invalidTransition(kind, id, workflow, snapshot, wanted, event.role);
  const current = currentState(workflow, snapshot);
  const needs = missing.map((requirement) => (requirement === 'attachment' ? ATTACHMENT_NEEDED[kind] : 'cancellation_notes')).join(' and ');
  const field = missing.includes('cancellation_notes') ? 'cancellation_notes' : undefined;
  return new DomainError(422, 'REQUIREMENT_NOT_MET', `${kind} ${id}: moving from ${current.key} to ${wanted} needs ${needs}`, field, { current_state: current, missing });
}

const ATTACHMENT_NEEDED: Record<EntityKind, string> = {
  job: 'an attachment of this job (POST /job/attachments)',
  stop: 'an attachment of this stop (POST /job/attachments with its stop_id, or without one for the whole job; uploaded by staff or a driver)',
  route: 'an attachment',
};

function invalidTransition(kind: EntityKind, id: string, workflow: Workflow, snapshot: EntitySnapshot, wanted: string, role: ActingRole): DomainError {
  const current = currentState(workflow, snapshot);
  const allowed = allowedMoves(workflow, snapshot, role);
  const list = allowed.length > 0 ? allowed.map((m) => m.key).join(', ') : 'none';
  return new DomainError(409, 'INVALID_TRANSITION', `${kind} ${id} cannot go from ${current.key} to ${wanted} as ${role}; allowed moves: ${list}`, undefined, {
    current_state: current,
    allowed_moves: allowed,
  });
}
