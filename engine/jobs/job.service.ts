import type { EntityManager } from '@mikro-orm/postgresql';
import { buildEntityMachine } from '../../machines/entity-machine.ts';
import { initialSnapshot, persistSnapshot } from '../../machines/entity-snapshot.ts';
import { auditRecordValues } from '../../persistence/audit.ts';
import type { Address } from '../../persistence/entities/address.entity.ts';
import type { CustomFieldValues } from '../../persistence/entities/custom-field-definition.entity.ts';
import type { Job } from '../../persistence/entities/job.entity.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { assertOptions } from '../catalog/option.service.ts';
import { assertServiceType } from '../catalog/service-type.service.ts';
import { findOrCreateCustomer, knownActiveCustomer } from '../catalog/customer.service.ts';
import type { CommandScope } from '../commands/apply-transition.ts';
import { resolveCustomFields } from '../customfields/custom-field-values.ts';
import { checkDriverLoadOnEntry } from '../dispatch/driver-load-check.ts';
import { DomainError } from '../domain-error.ts';
import { enforceBannedZones, recordZoneOverride } from '../fleet/zone-rules.ts';
import { readJobCreateContext, type JobCreateContext } from './job-create-context.ts';
import { isStaff, type JobActor, type JobInput } from './job-input.ts';
import { draftStops, validateStops } from './job-stops.ts';
import { insertJobRows } from './job-rows-insert.ts';
import { toJobData, toStopData, type JobData } from './job-view.ts';

/**
 * Creates a job and its ordered stops in their initial workflow states, in one transaction with its audit record
 * and the `job:create` event. A customer creates jobs for themselves only, and cannot override zone rules.
 * @throws DomainError 400/404 naming the field for bad input, 422 ZONE_RESTRICTED for a stop in a banned zone
 * (nothing is written)
 */
export async function createJob(scope: CommandScope, input: JobInput): Promise<JobData> {
  const { em, siteId, actor } = scope;
  const { knownAddresses, context, customFields, stopCustomFields } = await checkJobInput(em, siteId, actor, input);
  const overridden = enforceBannedZones(context.bannedZones, actor.role, input.stops, knownAddresses, input.override_zone_restriction === true);
  const customer =
    actor.role === 'customer' && actor.userId
      ? { id: actor.userId }
      : (knownActiveCustomer(context.customer) ??
        (await findOrCreateCustomer(em, actor, siteId, {
            customer_user_id: input.customer_user_id,
            email: input.customer_email,
            first_name: input.customer_first_name,
            last_name: input.customer_last_name,
            phone: input.customer_phone,
            phone_country: input.customer_phone_country,
          })));
  const { jobWorkflow: workflow, stopWorkflow } = context;
  const initial = workflow.states.find((s) => s.is_initial)!;
  const snapshot = initialSnapshot(buildEntityMachine(workflow));
  const jobId = newId('job');
  const now = new Date();
  const { stops, newAddresses, audits } = draftStops(actor, siteId, jobId, stopWorkflow, input.stops, knownAddresses, now);
  // A plain row, not an ORM entity: it is inserted with raw SQL (insertJobRows) and never managed.
  const job: Job = {
    id: jobId,
    siteId,
    workflowId: workflow.id,
    workflowStateId: initial.id,
    phase: initial.phase,
    version: 1,
    snapshot: persistSnapshot(snapshot),
    customerUserId: customer.id,
    serviceTypeId: input.service_type_id ?? null,
    optionIds: input.option_ids ?? [],
    estimateId: input.estimate_id ?? null,
    driverUserId: input.driver_user_id ?? null,
    customerNotes: input.customer_notes ?? null,
    driverNotes: input.driver_notes ?? null,
    internalNotes: isStaff(actor.role) ? (input.internal_notes ?? null) : null,
    paymentMethod: input.payment_method ?? null,
    // Only an override that went past a zone is stored: a bare flag must not exempt the job from zones drawn later.
    zoneOverride: overridden.length > 0,
    customFields,
    createdByUserId: actor.userId,
    routeId: null,
    cancellationNotes: null,
    completedAt: null,
    cancelledAt: null,
    deletedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  // draftStops orders stops by `order` (else position), stably: the same sort pairs each stop with its values.
  const valuesInStopOrder = input.stops.map((stop, index) => ({ order: stop.order ?? index, values: stopCustomFields[index]! })).sort((a, b) => a.order - b.order);
  for (const [position, { stop }] of stops.entries()) stop.customFields = valuesInStopOrder[position]!.values;
  // A workflow whose first state is open gives the driver named a job at once: one of their max_load slots.
  await checkDriverLoadOnEntry(scope, job, null, job.phase);
  // The job, its stops and their new addresses in one statement; the addresses' audit records go with the COMMIT.
  await insertJobRows(em, job, stops.map(({ stop }) => stop), newAddresses);
  scope.pending.audits.push(...audits);
  // The view from the rows just written (the entities hold what was inserted), not read back.
  const view = (forStaff: boolean) => toJobData(job, workflow, stops.map(({ stop, address }) => toStopData(stop, stopWorkflow, address, forStaff)), forStaff);
  const data = view(true);
  // The audit record and the job:create event go out with the command's COMMIT, as a transition's do.
  scope.pending.audits.push(auditRecordValues(actor, { siteId, action: 'create', entityType: 'Job', entityId: job.id, before: null, after: data }));
  recordZoneOverride(em, actor, siteId, job.id, overridden);
  scope.pending.events.push({ siteId, event: 'job:create', entityType: 'job', entityId: job.id, entityVersion: job.version, data, timestamp: scope.clock.now() });
  scope.touched.set(job.id, { snapshot, version: job.version, workflowId: workflow.id });
  for (const { stop } of stops) scope.touched.set(stop.id, { snapshot: initialSnapshot(buildEntityMachine(stopWorkflow)), version: stop.version, workflowId: stopWorkflow.id });
  return isStaff(actor.role) ? data : view(false);
}

/**
 * What createJob checks of a request before it writes anything, and what those checks read: who may name the
 * customer and the driver, the stops (`validateStops`), custom field values, the service type, options and driver.
 * It only reads, so a request can be checked before its addresses are located and no geocoder is called for one
 * that would be refused (`pointsToCome`: a stop with address text but no point passes, its point is yet to be found).
 * Banned zones need the points and the customer is found or created: createJob checks those after.
 * @throws DomainError as createJob
 */
export async function checkJobInput(em: EntityManager, siteId: string, actor: JobActor, input: JobInput, pointsToCome = false): Promise<CheckedJobInput> {
  if (actor.role === 'customer' && input.customer_user_id && input.customer_user_id !== actor.userId) {
    throw new DomainError(403, 'FORBIDDEN_FIELD', 'A customer creates jobs for themselves', 'customer_user_id');
  }
  if (!isStaff(actor.role) && input.driver_user_id !== undefined) {
    throw new DomainError(403, 'FORBIDDEN_FIELD', 'Only staff choose the driver', 'driver_user_id');
  }
  const knownAddresses = await validateStops(em, input.stops, actor, pointsToCome);
  const context = await readJobCreateContext(em, siteId, customerEmailToLookUp(actor, input));
  const customFields = resolveCustomFields(context.jobFields, null, input.custom_fields);
  const stopCustomFields = input.stops.map((stop, index) => resolveCustomFields(context.stopFields, null, stop.custom_fields, `stops.${index}.custom_fields`));
  if (input.service_type_id) await assertServiceType(em, input.service_type_id);
  await assertOptions(em, input.option_ids ?? []);
  if (input.driver_user_id) await assertDriver(em, input.driver_user_id);
  return { knownAddresses, context, customFields, stopCustomFields };
}

type CheckedJobInput = {
  knownAddresses: Map<string, Address>;
  context: JobCreateContext;
  customFields: CustomFieldValues;
  stopCustomFields: CustomFieldValues[];
};

/** Refuses changes to a job that is finished. */
export function assertOpen(job: Job): void {
  if (job.phase === 'completed' || job.phase === 'cancelled') {
    throw DomainError.conflict('JOB_CLOSED', `Job ${job.id} is ${job.phase}; it can no longer be changed`);
  }
}

/**
 * The email whose user the creation reads up front: only when findOrCreateCustomer would look the customer up by
 * email (no customer id, not a customer acting for themselves, not a reserved address it refuses outright).
 */
function customerEmailToLookUp(actor: CommandScope['actor'], input: JobInput): string | null {
  if (actor.role === 'customer' || input.customer_user_id || !input.customer_email) return null;
  const email = input.customer_email.toLowerCase();
  return email.endsWith('.invalid') ? null : email;
}

async function assertDriver(em: EntityManager, userId: string): Promise<void> {
  const profile = await em.findOne(UserProfileSchema, { userId, role: 'driver', isActive: true });
  if (!profile) throw new DomainError(404, 'NOT_FOUND', `Driver ${userId} not found`, 'driver_user_id');
}
