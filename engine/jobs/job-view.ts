import type { Workflow } from '../../machines/workflow.schema.ts';
import type { Address } from '../../persistence/entities/address.entity.ts';
import type { CustomFieldValues } from '../../persistence/entities/custom-field-definition.entity.ts';
import type { Job } from '../../persistence/entities/job.entity.ts';
import type { Stop } from '../../persistence/entities/stop.entity.ts';

/** A workflow state as shown with an entity. */
export type StateView = { id: string; key: string; name: string; phase: string };

function stateView(workflow: Workflow, stateId: string): StateView {
  const state = workflow.states.find((s) => s.id === stateId);
  return state ? { id: state.id, key: state.key, name: state.name, phase: state.phase } : { id: stateId, key: 'unknown', name: 'unknown', phase: 'unknown' };
}

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

/** What the views read of a stop: an entity, or a row mapped by `stopFromRow`. */
export type StopFields = Pick<
  Stop,
  | 'id' | 'jobId' | 'sortOrder' | 'type' | 'workflowStateId' | 'phase' | 'version' | 'addressId' | 'completeAfter' | 'completeBefore'
  | 'contactName' | 'contactPhone' | 'contactPhoneCountry' | 'customerNotes' | 'driverNotes' | 'internalNotes' | 'cancellationNotes'
  | 'completedAt' | 'createdAt' | 'updatedAt' | 'customFields'
>;

/** What the views read of a job: an entity, or a row mapped by `jobFromRow`. */
export type JobFields = Pick<
  Job,
  | 'id' | 'siteId' | 'workflowStateId' | 'phase' | 'version' | 'customerUserId' | 'serviceTypeId' | 'optionIds' | 'estimateId'
  | 'driverUserId' | 'routeId' | 'customerNotes' | 'driverNotes' | 'internalNotes' | 'paymentMethod' | 'cancellationNotes'
  | 'createdByUserId' | 'completedAt' | 'cancelledAt' | 'createdAt' | 'updatedAt' | 'customFields'
>;

/** What the embedded address view reads: an entity, or a row mapped by hand. */
export type AddressFields = Pick<Address, 'id' | 'formattedName' | 'streetAddress' | 'streetAddress2' | 'city' | 'state' | 'postalCode' | 'country' | 'lat' | 'lng'>;

/** A `job` or `stop` row as `select *` / `returning *` gives it through `em.execute` (snake_case; timestamps as text). */
export type EntityRow = Record<string, unknown>;

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));
// The ORM parses timestamptz text the same way (`new Date(value)`).
const date = (value: unknown): Date | null => (value === null || value === undefined ? null : value instanceof Date ? value : new Date(String(value)));

/** A job row (raw SQL) as the fields the views and the command path read, plus its workflow and snapshot. */
export function jobFromRow(row: EntityRow) {
  return {
    id: String(row.id),
    siteId: String(row.site_id),
    workflowId: String(row.workflow_id),
    workflowStateId: String(row.workflow_state_id),
    phase: String(row.phase),
    version: Number(row.version),
    snapshot: row.snapshot,
    customerUserId: text(row.customer_user_id),
    serviceTypeId: text(row.service_type_id),
    optionIds: row.option_ids as string[],
    estimateId: text(row.estimate_id),
    driverUserId: text(row.driver_user_id),
    routeId: text(row.route_id),
    customerNotes: text(row.customer_notes),
    driverNotes: text(row.driver_notes),
    internalNotes: text(row.internal_notes),
    paymentMethod: text(row.payment_method),
    cancellationNotes: text(row.cancellation_notes),
    createdByUserId: text(row.created_by_user_id),
    completedAt: date(row.completed_at),
    cancelledAt: date(row.cancelled_at),
    createdAt: date(row.created_at)!,
    updatedAt: date(row.updated_at)!,
    customFields: (row.custom_fields ?? {}) as CustomFieldValues,
  } satisfies JobFields & { workflowId: string; snapshot: unknown };
}

/** A stop row (raw SQL) as the fields the views and the command path read, plus its workflow and snapshot. */
export function stopFromRow(row: EntityRow) {
  return {
    id: String(row.id),
    jobId: String(row.job_id),
    workflowId: String(row.workflow_id),
    workflowStateId: String(row.workflow_state_id),
    phase: String(row.phase),
    version: Number(row.version),
    snapshot: row.snapshot,
    sortOrder: Number(row.sort_order),
    type: String(row.type),
    addressId: String(row.address_id),
    completeAfter: date(row.complete_after),
    completeBefore: date(row.complete_before),
    contactName: text(row.contact_name),
    contactPhone: text(row.contact_phone),
    contactPhoneCountry: text(row.contact_phone_country),
    customerNotes: text(row.customer_notes),
    driverNotes: text(row.driver_notes),
    internalNotes: text(row.internal_notes),
    cancellationNotes: text(row.cancellation_notes),
    completedAt: date(row.completed_at),
    createdAt: date(row.created_at)!,
    updatedAt: date(row.updated_at)!,
    customFields: (row.custom_fields ?? {}) as CustomFieldValues,
  } satisfies StopFields & { workflowId: string; snapshot: unknown };
}

export type JobRecord = ReturnType<typeof jobFromRow>;
export type StopRecord = ReturnType<typeof stopFromRow>;

/**
 * A stop as the API and the events show it (snake_case, RFC 3339). The address is embedded when known.
 * Internal notes are for staff: pass `forStaff: false` to leave them out.
 */
export function toStopData(stop: StopFields, workflow: Workflow, address: AddressFields | null, forStaff = true) {
  return {
    id: stop.id,
    job_id: stop.jobId,
    order: stop.sortOrder,
    type: stop.type,
    workflow_state_id: stop.workflowStateId,
    workflow_state: stateView(workflow, stop.workflowStateId),
    phase: stop.phase,
    version: stop.version,
    address_id: stop.addressId,
    address: address ? toEmbeddedAddress(address) : null,
    complete_after: iso(stop.completeAfter),
    complete_before: iso(stop.completeBefore),
    contact_name: stop.contactName ?? null,
    contact_phone: stop.contactPhone ?? null,
    contact_phone_country: stop.contactPhoneCountry ?? null,
    customer_notes: stop.customerNotes ?? null,
    driver_notes: stop.driverNotes ?? null,
    ...(forStaff ? { internal_notes: stop.internalNotes ?? null } : {}),
    cancellation_notes: stop.cancellationNotes ?? null,
    custom_fields: stop.customFields ?? {},
    completed_at: iso(stop.completedAt),
    created_at: stop.createdAt.toISOString(),
    updated_at: stop.updatedAt.toISOString(),
  };
}

export type StopData = ReturnType<typeof toStopData>;

/** A job as the API and the events show it; `stops` when loaded (the detail view and job:create). */
export function toJobData(job: JobFields, workflow: Workflow, stops?: StopData[], forStaff = true) {
  return {
    id: job.id,
    site_id: job.siteId,
    workflow_state_id: job.workflowStateId,
    workflow_state: stateView(workflow, job.workflowStateId),
    phase: job.phase,
    version: job.version,
    customer_user_id: job.customerUserId ?? null,
    service_type_id: job.serviceTypeId ?? null,
    option_ids: job.optionIds,
    estimate_id: job.estimateId ?? null,
    driver_user_id: job.driverUserId ?? null,
    route_id: job.routeId ?? null,
    customer_notes: job.customerNotes ?? null,
    driver_notes: job.driverNotes ?? null,
    ...(forStaff ? { internal_notes: job.internalNotes ?? null } : {}),
    payment_method: job.paymentMethod ?? null,
    cancellation_notes: job.cancellationNotes ?? null,
    custom_fields: job.customFields ?? {},
    created_by_user_id: job.createdByUserId ?? null,
    completed_at: iso(job.completedAt),
    cancelled_at: iso(job.cancelledAt),
    created_at: job.createdAt.toISOString(),
    updated_at: job.updatedAt.toISOString(),
    ...(stops ? { stops } : {}),
  };
}

export type JobData = ReturnType<typeof toJobData>;

function toEmbeddedAddress(a: AddressFields) {
  return {
    id: a.id,
    formatted_name: a.formattedName,
    street_address: a.streetAddress ?? null,
    street_address2: a.streetAddress2 ?? null,
    city: a.city ?? null,
    state: a.state ?? null,
    postal_code: a.postalCode ?? null,
    country: a.country ?? null,
    point: { lat: Number(a.lat), lng: Number(a.lng) },
  };
}
