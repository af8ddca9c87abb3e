import { recordAudit } from '../../persistence/audit.ts';
import { AddressSchema } from '../../persistence/entities/address.entity.ts';
import { JobSchema } from '../../persistence/entities/job.entity.ts';
import { StopSchema } from '../../persistence/entities/stop.entity.ts';
import { lockAddress } from '../admin/address-change-rules.ts';
import { addressHiddenFrom } from '../admin/address-visibility.ts';
import { createAddress } from '../admin/address.service.ts';
import { applyPatch } from '../admin/patch.ts';
import { assertOptions } from '../catalog/option.service.ts';
import { findOrCreateCustomer } from '../catalog/customer.service.ts';
import type { CommandScope } from '../commands/apply-transition.ts';
import { loadDefinitions, resolveCustomFields } from '../customfields/custom-field-values.ts';
import { DomainError } from '../domain-error.ts';
import { enforceBannedZonesAt, recordZoneOverride } from '../fleet/zone-rules.ts';
import { findVisibleJob, jobDetail } from './job-detail.ts';
import { isStaff, type AddressTextUpdate, type JobUpdate, type StopUpdate } from './job-input.ts';
import { assertOpen } from './job.service.ts';
import type { JobData } from './job-view.ts';

const JOB_FIELDS = { customer_notes: 'customerNotes', driver_notes: 'driverNotes', internal_notes: 'internalNotes', payment_method: 'paymentMethod' } as const;
const STOP_FIELDS = {
  type: 'type',
  address_id: 'addressId',
  contact_name: 'contactName',
  contact_phone: 'contactPhone',
  contact_phone_country: 'contactPhoneCountry',
  customer_notes: 'customerNotes',
  driver_notes: 'driverNotes',
  internal_notes: 'internalNotes',
} as const;

/**
 * Edits a job's details and its stops' details (three-state: a value sets, omitted keeps, null clears). State never
 * changes here: that is the command path's. Every write bumps the optimistic version. A stop moved to an address in
 * a banned zone follows job creation's rule (`override_zone_restriction`: staff only).
 * @throws DomainError 404, 409 JOB_CLOSED / STOP_CLOSED, 400 naming the field, 422 ZONE_RESTRICTED
 */
export async function updateJob(scope: CommandScope, id: string, patch: JobUpdate): Promise<JobData> {
  const { em, siteId, actor } = scope;
  const job = await findVisibleJob(em, actor, id);
  assertOpen(job);
  if (!isStaff(actor.role) && (patch.internal_notes !== undefined || patch.customer_user_id !== undefined)) {
    const field = patch.customer_user_id !== undefined ? 'customer_user_id' : 'internal_notes';
    throw new DomainError(403, 'FORBIDDEN_FIELD', 'Only staff change the customer or internal notes', field);
  }
  const before = await jobDetail(em, { ...actor, role: 'system' }, job);
  if (patch.custom_fields !== undefined) job.customFields = resolveCustomFields(await loadDefinitions(em, 'job'), job.customFields ?? {}, patch.custom_fields);
  applyPatch(job, patch, JOB_FIELDS);
  if (patch.option_ids !== undefined) {
    const optionIds = patch.option_ids ?? [];
    // Only options the update adds must be active: one retired since the job took it stays until it is removed.
    await assertOptions(em, optionIds.filter((optionId) => !(job.optionIds ?? []).includes(optionId)));
    job.optionIds = optionIds;
  }
  if (patch.customer_user_id !== undefined) job.customerUserId = (await findOrCreateCustomer(em, actor, siteId, { customer_user_id: patch.customer_user_id })).id;
  for (const [index, stopPatch] of (patch.stops ?? []).entries()) {
    await updateStopFields(scope, job.id, stopPatch, `stops.${index}`, patch.override_zone_restriction === true);
  }
  job.updatedAt = scope.clock.now();
  await em.flush();
  const after = await jobDetail(em, { ...actor, role: 'system' }, job);
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'Job', entityId: job.id, before, after });
  await em.flush();
  return isStaff(actor.role) ? after : jobDetail(em, actor, job);
}

/**
 * Edits one stop's details (not its state or order). `jobId` given: the stop must belong to that job. `prefix`: where
 * the stop is in the request (`stops.2` in a job update; none for PUT /stop), for the fields errors name. `override`:
 * staff let the stop move into a banned zone (the job then carries the override, audited as at creation).
 */
export async function updateStopFields(scope: CommandScope, jobId: string | null, patch: StopUpdate, prefix: string | null = null, override = false): Promise<void> {
  const { em, actor } = scope;
  const field = (name: string) => (prefix ? `${prefix}.${name}` : name);
  const stop = await em.findOne(StopSchema, { id: patch.id, ...(jobId ? { jobId } : {}) });
  if (!stop) throw new DomainError(404, 'NOT_FOUND', `Stop ${patch.id} not found on this job`, field('id'));
  if (stop.phase === 'completed' || stop.phase === 'cancelled') throw DomainError.conflict('STOP_CLOSED', `Stop ${stop.id} is ${stop.phase}`);
  if (!isStaff(actor.role) && patch.internal_notes !== undefined) throw new DomainError(403, 'FORBIDDEN_FIELD', 'Only staff write internal notes', field('internal_notes'));
  const text = addressTextOf(patch);
  if (text && patch.address_id) {
    throw DomainError.invalid('ADDRESS_AMBIGUOUS', 'Give address_id or the address fields, not both', field('address_id'));
  }
  if (text) stop.addressId = (await rewordedAddress(scope, stop.addressId, text)).id;
  if (patch.address_id && patch.address_id !== stop.addressId) {
    await lockAddress(em, patch.address_id);
    // Through the ORM's site filter (this site's address or a global one), as a create looks it up: on PGlite no
    // row-level security hides another site's, and a plain SQL read found it. `refresh`: read after the lock, not a
    // copy this command loaded before it (a job update's before-view loads its stops' addresses).
    const address = await em.findOne(AddressSchema, { id: patch.address_id }, { refresh: true });
    if (!address || (await addressHiddenFrom(em, actor, patch.address_id))) throw new DomainError(404, 'NOT_FOUND', `Address ${patch.address_id} not found`, field('address_id'));
    const place = { stopIndex: stop.sortOrder, lat: Number(address.lat), lng: Number(address.lng) };
    const overridden = await enforceBannedZonesAt(em, scope.siteId, actor.role, place, override, field('address_id'));
    if (overridden.length > 0) {
      const job = await em.findOneOrFail(JobSchema, { id: stop.jobId });
      job.zoneOverride = true;
      recordZoneOverride(em, actor, scope.siteId, job.id, overridden);
    }
  }
  if (patch.custom_fields !== undefined) {
    stop.customFields = resolveCustomFields(await loadDefinitions(em, 'stop'), stop.customFields ?? {}, patch.custom_fields, field('custom_fields'));
  }
  applyPatch(stop, patch, STOP_FIELDS);
  if (patch.complete_after !== undefined) stop.completeAfter = patch.complete_after ? new Date(patch.complete_after) : null;
  if (patch.complete_before !== undefined) stop.completeBefore = patch.complete_before ? new Date(patch.complete_before) : null;
  if (stop.completeAfter && stop.completeBefore && stop.completeBefore <= stop.completeAfter) {
    throw DomainError.invalid('INVALID_TIME_WINDOW', `Stop ${stop.id}'s time window ends before it starts`, field('complete_before'));
  }
}

const ADDRESS_TEXT = ['street_address', 'street_address2', 'city', 'state', 'postal_code', 'country'] as const;

/** The address text fields a stop update gives, or null when it gives none. */
function addressTextOf(patch: StopUpdate): AddressTextUpdate | null {
  const given = ADDRESS_TEXT.filter((name) => patch[name] !== undefined);
  return given.length === 0 ? null : Object.fromEntries(given.map((name) => [name, patch[name]]));
}

/**
 * A stop's address with new text (the spec's stop update: the create fields minus the point): a new address, the
 * stop's current one with `text` applied (null clears a field), at the same point. The current address is left as it
 * is: other stops or a customer's home may share it.
 */
async function rewordedAddress(scope: CommandScope, addressId: string, text: AddressTextUpdate) {
  const current = await scope.em.findOneOrFail(AddressSchema, { id: addressId });
  const kept = {
    street_address: current.streetAddress, street_address2: current.streetAddress2, city: current.city,
    state: current.state, postal_code: current.postalCode, country: current.country,
  };
  const merged = Object.fromEntries(Object.entries({ ...kept, ...text }).filter(([, value]) => value !== null && value !== undefined));
  return createAddress(scope.em, scope.actor, scope.siteId, { ...merged, point: { lat: Number(current.lat), lng: Number(current.lng) } });
}
