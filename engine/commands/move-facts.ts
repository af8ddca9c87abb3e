import type { MoveFacts } from '../../machines/entity-machine.ts';
import type { Workflow } from '../../machines/workflow.schema.ts';
import type { CommandScope, EntityKind } from './apply-transition.ts';

/**
 * What a move's `requires` may ask of the entity. The attachment fact costs a query, so it is read only when the
 * workflow has a move that requires one: for a job, a ready (confirmed) attachment linked to it; for a stop, one
 * linked to that stop (`stop_id`) or to its job as a whole (`stop_id` null: driver apps that predate stop links send
 * their proof that way) and uploaded by staff or a driver of the site, so that neither the customer's own upload nor
 * another stop's photo is taken as this stop's proof. A route has none.
 */
export async function moveFacts(scope: CommandScope, workflow: Workflow, kind: EntityKind, id: string, notes: { cancellationNotes?: string }): Promise<MoveFacts> {
  const hasCancellationNotes = Boolean(notes.cancellationNotes?.trim());
  if (kind === 'route' || !workflow.transitions.some((t) => t.requires?.includes('attachment'))) return { hasCancellationNotes, hasAttachment: false };
  const [row] = await scope.em.execute<{ ready: boolean }[]>(kind === 'job' ? JOB_HAS_ATTACHMENT : STOP_HAS_PROOF, kind === 'job' ? [id] : [id, id]);
  return { hasCancellationNotes, hasAttachment: row?.ready === true };
}

const JOB_HAS_ATTACHMENT = `select exists (select 1 from job_attachment ja join attachment a on a.id = ja.attachment_id
  where ja.job_id = ? and a.status = 'ready' and a.is_active) as ready`;

const STOP_HAS_PROOF = `select exists (select 1 from job_attachment ja join attachment a on a.id = ja.attachment_id
  where (ja.stop_id = ? or (ja.stop_id is null and ja.job_id = (select s.job_id from stop s where s.id = ?)))
    and a.status = 'ready' and a.is_active
    and exists (select 1 from user_profile up where up.user_id = a.created_by_user_id and up.site_id = a.site_id
      and up.role in ('admin', 'dispatcher', 'driver'))) as ready`;

