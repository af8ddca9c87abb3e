import { recordAudit } from '../../persistence/audit.ts';
import { StopSchema } from '../../persistence/entities/stop.entity.ts';
import { appendOutbox } from '../../persistence/outbox.ts';
import { activeValues, loadDefinitions } from '../customfields/custom-field-values.ts';
import { DomainError } from '../domain-error.ts';
import type { CommandContext, Engine } from '../engine.ts';
import { findVisibleJob, jobDetail } from './job-detail.ts';
import type { StopInput } from './job-input.ts';
import type { JobData } from './job-view.ts';
import { createJob } from './job.service.ts';

export type BulkFailure = { id: string; error: string; code: string };
export type BulkResult<T> = { succeeded: T[]; failed: BulkFailure[] };

/** Jobs handled at once by a bulk call: enough to overlap round trips, few enough to leave the pool to others. */
const CONCURRENCY = 8;

/**
 * Runs one command per id and reports each outcome: a failure (unknown id, another site's, a move the workflow
 * refuses) fails that id only, with its code. Duplicate ids are handled once.
 */
async function eachId<T>(ids: string[], run: (id: string) => Promise<T>): Promise<BulkResult<T>> {
  const unique = [...new Set(ids)];
  const outcomes: ({ ok: T } | { failure: BulkFailure })[] = [];
  let next = 0;
  async function worker(): Promise<void> {
    while (next < unique.length) {
      const index = next++;
      const id = unique[index]!;
      try {
        outcomes[index] = { ok: await run(id) };
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        outcomes[index] = { failure: { id, error: error.message, code: error.code } };
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, unique.length) }, worker));
  return {
    succeeded: outcomes.flatMap((o) => ('ok' in o ? [o.ok] : [])),
    failed: outcomes.flatMap((o) => ('failure' in o ? [o.failure] : [])),
  };
}

/**
 * Cancels jobs one command each. Bulk calls are for staff, who see every job of the site, and the transition
 * itself answers 404 for an unknown, deleted or foreign id, so no separate visibility read is needed.
 */
export function bulkCancel(engine: Engine, ctx: CommandContext, ids: string[], notes?: string): Promise<BulkResult<string>> {
  return eachId(ids, async (id) => {
    await engine.transition(ctx, 'job', id, { kind: 'phase', event: 'cancel' }, notes === undefined ? {} : { cancellationNotes: notes });
    return id;
  });
}

/** Soft-deletes jobs that are not being worked (unassigned, completed or cancelled); their rows stay for the audit. */
export function bulkDelete(engine: Engine, ctx: CommandContext, ids: string[]): Promise<BulkResult<string>> {
  return eachId(ids, (id) =>
    engine.command(ctx, `job:${id}`, async (scope) => {
      const job = await findVisibleJob(scope.em, scope.actor, id);
      if (job.phase === 'assigned' || job.phase === 'in_progress') {
        throw DomainError.conflict('JOB_ACTIVE', `Job ${id} is ${job.phase}: cancel or return it before deleting`);
      }
      const before = await jobDetail(scope.em, scope.actor, job);
      job.deletedAt = scope.clock.now();
      await scope.em.flush();
      recordAudit(scope.em, scope.actor, { siteId: scope.siteId, action: 'delete', entityType: 'Job', entityId: id, before, after: null });
      appendOutbox(scope.em, { siteId: scope.siteId, event: 'job:delete', entityType: 'job', entityId: id, entityVersion: job.version, data: { id }, timestamp: scope.clock.now() });
      await scope.em.flush();
      return id;
    }),
  );
}

/** Copies jobs (customer, service, options, notes, stops and their addresses) as new jobs in the initial state. */
export function bulkDuplicate(engine: Engine, ctx: CommandContext, ids: string[]): Promise<BulkResult<JobData>> {
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
  );
}
