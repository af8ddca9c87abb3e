import { recordAudit } from '../../persistence/audit.ts';
import { StopSchema } from '../../persistence/entities/stop.entity.ts';
import { appendOutbox } from '../../persistence/outbox.ts';
import { releaseJobFromRoute } from '../commands/cascade-rules.ts';
import { activeValues, loadDefinitions } from '../customfields/custom-field-values.ts';
import { eachId, type BulkResult, type EachIdOptions } from '../bulk-outcomes.ts';
import { DomainError } from '../domain-error.ts';
import type { CommandContext, Engine } from '../engine.ts';
import { findVisibleJob, jobDetail } from './job-detail.ts';
import type { StopInput } from './job-input.ts';
import type { JobData } from './job-view.ts';
import { createJob } from './job.service.ts';

/** Jobs handled at once by a bulk call: enough to overlap round trips, few enough to leave the pool to others. */
const CONCURRENCY = 8;

/** Told of each job that failed on the server's side (the answer lists it as INTERNAL_ERROR): see `eachId`. */
type OnInternalError = EachIdOptions['onInternalError'];

/**
 * Cancels jobs one command each. Bulk calls are for staff, who see every job of the site, and the transition
 * itself answers 404 for an unknown, deleted or foreign id, so no separate visibility read is needed.
 */
export function bulkCancel(engine: Engine, ctx: CommandContext, ids: string[], notes: string | undefined, onInternalError: OnInternalError): Promise<BulkResult<string>> {
  return eachId(
    ids,
    async (id) => {
      await engine.transition(ctx, 'job', id, { kind: 'phase', event: 'cancel' }, notes === undefined ? {} : { cancellationNotes: notes });
      return id;
    },
    { concurrency: CONCURRENCY, onInternalError },
  );
}

/**
 * Soft-deletes jobs that are not being worked (unassigned, completed or cancelled); their rows stay for the audit. An
 * unassigned job on a route leaves it first, as a returned job does, in the same transaction.
 */
export function bulkDelete(engine: Engine, ctx: CommandContext, ids: string[], onInternalError: OnInternalError): Promise<BulkResult<string>> {
  return eachId(ids, (id) =>
    engine.command(ctx, `job:${id}`, async (scope) => {
      const job = await findVisibleJob(scope.em, scope.actor, id);
      if (job.phase === 'assigned' || job.phase === 'in_progress') {
        throw DomainError.conflict('JOB_ACTIVE', `Job ${id} is ${job.phase}: cancel or return it before deleting`);
      }
      const before = await jobDetail(scope.em, scope.actor, job);
      // Left on its route, its stops stayed in the route's order and the route, its other jobs done, stayed in progress
      // for good. A completed or cancelled job no longer holds its route open: it is left as it was.
      if (job.routeId && job.phase === 'unassigned') {
        await releaseJobFromRoute(scope, id);
        // The release wrote the job's row with SQL (route_id, version): the entity must hold that version.
        await scope.em.refresh(job);
      }
      job.deletedAt = scope.clock.now();
      await scope.em.flush();
      recordAudit(scope.em, scope.actor, { siteId: scope.siteId, action: 'delete', entityType: 'Job', entityId: id, before, after: null });
      appendOutbox(scope.em, { siteId: scope.siteId, event: 'job:delete', entityType: 'job', entityId: id, entityVersion: job.version, data: { id }, timestamp: scope.clock.now() });
      await scope.em.flush();
      return id;
    }),
    { concurrency: CONCURRENCY, onInternalError },
  );
}

/** Copies jobs (customer, service, options, notes, stops and their addresses) as new jobs in the initial state. */
export function bulkDuplicate(engine: Engine, ctx: CommandContext, ids: string[], onInternalError: OnInternalError): Promise<BulkResult<JobData>> {
  return eachId(ids, (id) =>
    engine.command(ctx, `job:${id}:duplicate`, async (scope) => {
      const job = await findVisibleJob(scope.em, scope.actor, id);
      const stops = await scope.em.find(StopSchema, { jobId: id }, { orderBy: { sortOrder: 'asc' } });
      const stopDefinitions = await loadDefinitions(scope.em, 'stop');
      const stopInputs: StopInput[] = stops.map((s) => ({
        type: s.type,
        address_id: s.addressId,
        ...(s.completeAfter ? { complete_after: s.completeAfter.toISOString() } : {}),
        ...(s.completeBefore ? { complete_before: s.completeBefore.toISOString() } : {}),
        ...(s.contactName ? { contact_name: s.contactName } : {}),
        ...(s.contactPhone ? { contact_phone: s.contactPhone } : {}),
        ...(s.contactPhoneCountry ? { contact_phone_country: s.contactPhoneCountry } : {}),
        ...(s.customerNotes ? { customer_notes: s.customerNotes } : {}),
        ...(s.driverNotes ? { driver_notes: s.driverNotes } : {}),
        ...(s.internalNotes ? { internal_notes: s.internalNotes } : {}),
        custom_fields: activeValues(stopDefinitions, s.customFields),
      }));
      return createJob(scope, {
        ...(job.customerUserId ? { customer_user_id: job.customerUserId } : {}),
        ...(job.serviceTypeId ? { service_type_id: job.serviceTypeId } : {}),
        option_ids: job.optionIds,
        ...(job.customerNotes ? { customer_notes: job.customerNotes } : {}),
        ...(job.driverNotes ? { driver_notes: job.driverNotes } : {}),
        ...(job.internalNotes ? { internal_notes: job.internalNotes } : {}),
        ...(job.paymentMethod ? { payment_method: job.paymentMethod } : {}),
        custom_fields: activeValues(await loadDefinitions(scope.em, 'job'), job.customFields),
        stops: stopInputs,
      });
    }),
    { concurrency: CONCURRENCY, onInternalError },
  );
}
