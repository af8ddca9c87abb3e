import type { EntityManager } from '@mikro-orm/postgresql';
import type { Address } from '../../persistence/entities/address.entity.ts';
import type { Job } from '../../persistence/entities/job.entity.ts';
import type { Stop } from '../../persistence/entities/stop.entity.ts';
import { sendWithNext } from '../runtime/deferred-writes.ts';

/**
 * Writes a new job, its stops and their new addresses in ONE statement (data-modifying CTEs), where the ORM's flush
 * sent one INSERT per table. The rows are plain objects in the entities' shape, never handed to the ORM (see
 * `draftStops`, `addressRow`), with every column set, timestamps included; the foreign keys between these tables are deferred, so the order of the parts does not matter.
 * The values go in as the ORM writes them: JSON columns as JSON text, timestamps as RFC 3339 text.
 * Nothing reads its result (the ids are made here, the rows are built in memory), and a later statement of the same
 * transaction sees the rows, so it goes out with the command's next statement, at the latest its COMMIT
 * (`sendWithNext`), not in a round trip of its own; an error it raises (a foreign key, a unique id) fails that statement.
 */
export async function insertJobRows(em: EntityManager, job: Job, stops: Stop[], newAddresses: Address[]): Promise<void> {
  const params: unknown[] = [];
  const parts: string[] = [];
  if (newAddresses.length > 0) parts.push(`new_addresses as (insert into address (${ADDRESS_COLUMNS}) values ${rowsOf(newAddresses.map(addressValues), params)})`);
  parts.push(`new_stops as (insert into stop (${STOP_COLUMNS}) values ${rowsOf(stops.map(stopValues), params)})`);
  const jobRow = rowsOf([jobValues(job)], params);
  await sendWithNext(em, `with ${parts.join(', ')} insert into job (${JOB_COLUMNS}) values ${jobRow}`, params);
}

const ADDRESS_COLUMNS =
  'id, site_id, formatted_name, formatted_name_short, lat, lng, street_address, street_address2, street, house_number, city, county, state, state_code, postal_code, country, country_code, source, source_id, types, created_at, updated_at';
const STOP_COLUMNS =
  'id, site_id, job_id, workflow_id, workflow_state_id, phase, version, snapshot, type, sort_order, address_id, complete_after, complete_before, contact_name, contact_phone, contact_phone_country, customer_notes, driver_notes, internal_notes, cancellation_notes, completed_at, custom_fields, created_at, updated_at';
const JOB_COLUMNS =
  'id, site_id, workflow_id, workflow_state_id, phase, version, snapshot, customer_user_id, service_type_id, option_ids, estimate_id, driver_user_id, route_id, customer_notes, driver_notes, internal_notes, payment_method, zone_override, cancellation_notes, created_by_user_id, completed_at, cancelled_at, deleted_at, custom_fields, created_at, updated_at';

/** `(?, ?, ...), (...)` for the rows, their values appended to `params`. */
function rowsOf(rows: unknown[][], params: unknown[]): string {
  return rows
    .map((values) => {
      params.push(...values);
      return `(${values.map(() => '?').join(', ')})`;
    })
    .join(', ');
}

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
const time = (value: Date | null | undefined) => (value ? value.toISOString() : null);
const orNull = (value: unknown) => value ?? null;

function addressValues(a: Address): unknown[] {
  return [
    a.id, orNull(a.siteId), a.formattedName, a.formattedNameShort, a.lat, a.lng, orNull(a.streetAddress), orNull(a.streetAddress2), orNull(a.street),
    orNull(a.houseNumber), orNull(a.city), orNull(a.county), orNull(a.state), orNull(a.stateCode), orNull(a.postalCode), orNull(a.country),
    orNull(a.countryCode), orNull(a.source), orNull(a.sourceId), json(a.types), time(a.createdAt), time(a.updatedAt),
  ];
}

function stopValues(s: Stop): unknown[] {
  return [
    s.id, s.siteId, s.jobId, s.workflowId, s.workflowStateId, s.phase, s.version, json(s.snapshot), s.type, s.sortOrder, s.addressId,
    time(s.completeAfter), time(s.completeBefore), orNull(s.contactName), orNull(s.contactPhone), orNull(s.contactPhoneCountry),
    orNull(s.customerNotes), orNull(s.driverNotes), orNull(s.internalNotes), orNull(s.cancellationNotes), time(s.completedAt),
    json(s.customFields ?? {}), time(s.createdAt), time(s.updatedAt),
  ];
}

function jobValues(j: Job): unknown[] {
  return [
    j.id, j.siteId, j.workflowId, j.workflowStateId, j.phase, j.version, json(j.snapshot), orNull(j.customerUserId), orNull(j.serviceTypeId),
    json(j.optionIds), orNull(j.estimateId), orNull(j.driverUserId), orNull(j.routeId), orNull(j.customerNotes), orNull(j.driverNotes),
    orNull(j.internalNotes), orNull(j.paymentMethod), j.zoneOverride ?? false, orNull(j.cancellationNotes), orNull(j.createdByUserId),
    time(j.completedAt), time(j.cancelledAt), time(j.deletedAt), json(j.customFields ?? {}), time(j.createdAt), time(j.updatedAt),
  ];
}
