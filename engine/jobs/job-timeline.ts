import type { EntityManager } from '@mikro-orm/postgresql';
import { buildEntityMachine } from '../../machines/entity-machine.ts';
import { allowedMoves, restoreSnapshot } from '../../machines/entity-snapshot.ts';
import { AuditRecordSchema } from '../../persistence/entities/audit-record.entity.ts';
import { workflowById } from '../workflow/workflow.service.ts';
import { findVisibleJob } from './job-detail.ts';
import type { JobActor } from './job-input.ts';

type StateRef = { id: string; key: string; phase: string };

export type TimelineEntry = {
  from: StateRef | null;
  to: StateRef;
  event: string;
  role: string | null;
  user_id: string | null;
  application_id: string | null;
  request_id: string | null;
  at: string;
};

/**
 * A job's life so far, from its audit records (creation, then every transition with the event, acting role and
 * user), and the moves the caller may make now.
 */
export async function jobTimeline(em: EntityManager, actor: JobActor, id: string) {
  const job = await findVisibleJob(em, actor, id);
  const workflow = await workflowById(em, job.workflowId);
  const records = await em.find(AuditRecordSchema, { entityType: 'Job', entityId: id, action: { $in: ['create', 'state_change'] } }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  const initial = workflow.states.find((s) => s.is_initial)!;
  const transitions: TimelineEntry[] = records.map((record) => {
    const after = (record.newData ?? {}) as Record<string, unknown>;
    const before = record.previousData as Record<string, unknown> | null;
    const base = { user_id: record.userId ?? null, application_id: record.applicationId ?? null, request_id: record.requestId ?? null, at: record.createdAt.toISOString() };
    if (record.action === 'create') {
      return { ...base, from: null, to: { id: initial.id, key: initial.key, phase: initial.phase }, event: 'create', role: null };
    }
    return {
      ...base,
      from: { id: String(before?.workflow_state_id), key: String(before?.state), phase: String(before?.phase) },
      to: { id: String(after.workflow_state_id), key: String(after.state), phase: String(after.phase) },
      event: String(after.event ?? 'state.move'),
      role: typeof after.role === 'string' ? after.role : null,
    };
  });
  const snapshot = restoreSnapshot(buildEntityMachine(workflow), job.snapshot);
  return { job_id: job.id, version: job.version, current_state_id: job.workflowStateId, transitions, allowed_moves: allowedMoves(workflow, snapshot, actor.role) };
}
