import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../../persistence/audit.ts';
import { AddressSchema } from '../../persistence/entities/address.entity.ts';
import type { Stop } from '../../persistence/entities/stop.entity.ts';
import type { CommandScope } from '../commands/apply-transition.ts';
import { workflowById } from '../workflow/workflow.service.ts';
import { findVisibleStop } from './job-detail.ts';
import type { StopUpdate } from './job-input.ts';
import { updateStopFields } from './job-update.ts';
import { toStopData, type StopData } from './job-view.ts';

/**
 * PUT /stop: edits one stop's details (see `updateStopFields`) and records the edit as an `update` of the Stop, with
 * the stop as staff see it before and after, in the same transaction. A job update records its stops' edits in the
 * Job's own record instead; an edit made here would otherwise leave no trace in the audit log.
 * @throws DomainError 404 (a stop the actor may not see), and whatever `updateStopFields` throws
 */
export async function updateStop(scope: CommandScope, patch: StopUpdate, override: boolean): Promise<void> {
  const { em, actor, siteId } = scope;
  const { stop } = await findVisibleStop(em, actor, patch.id);
  const before = await stopAuditView(em, stop);
  await updateStopFields(scope, null, patch, null, override);
  await em.flush();
  const after = await stopAuditView(em, stop);
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'Stop', entityId: stop.id, before, after });
  await em.flush();
}

/** The stop as staff see it (internal notes and address included), read through the unit of work. */
async function stopAuditView(em: EntityManager, stop: Stop): Promise<StopData> {
  const address = await em.findOne(AddressSchema, { id: stop.addressId });
  return toStopData(stop, await workflowById(em, stop.workflowId), address, true);
}
