import type { EntityManager } from '@mikro-orm/postgresql';
import { buildEntityMachine } from '../../machines/entity-machine.ts';
import { initialSnapshot, persistSnapshot } from '../../machines/entity-snapshot.ts';
import type { Workflow } from '../../machines/workflow.schema.ts';
import { auditRecordValues, type AuditActor, type AuditRecordValues } from '../../persistence/audit.ts';
import { AddressSchema, type Address } from '../../persistence/entities/address.entity.ts';
import type { Stop } from '../../persistence/entities/stop.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { addressAuditSnapshot, addressRow } from '../admin/address.service.ts';
import { addressHiddenFrom } from '../admin/address-visibility.ts';
import { DomainError } from '../domain-error.ts';
import { addressQuery } from '../mapping/address-points.ts';
import { isStaff, type JobActor, type StopInput } from './job-input.ts';

/**
 * Checks a job's stops before anything is written: each needs an `address_id` of this site (or a global one) or an
 * inline address with a point (`pointsToCome`: or with text the geocoder is yet to find a point for), not both; a
 * time window must end after it starts; orders must be distinct. Only staff write a stop's internal notes, as in a
 * job update.
 * @returns the addresses the stops name by `address_id`, by id
 * @throws DomainError 400 naming `stops.<n>.<field>` (ADDRESS_AMBIGUOUS: `stops.<n>.address_id` given with inline
 *   address fields), 404 for an unknown or foreign address, 403 FORBIDDEN_FIELD naming `stops.<n>.internal_notes`
 *   for a customer's
 */
export async function validateStops(em: EntityManager, stops: StopInput[], actor: JobActor, pointsToCome = false): Promise<Map<string, Address>> {
  const orders = new Set<number>();
  const addresses = new Map<string, Address>();
  for (const [index, stop] of stops.entries()) {
    const field = (name: string) => `stops.${index}.${name}`;
    // Staff read internal notes as their own: a customer's would pass for the office's word (and they never see them).
    if (!isStaff(actor.role) && stop.internal_notes !== undefined) throw new DomainError(403, 'FORBIDDEN_FIELD', 'Only staff write internal notes', field('internal_notes'));
    if (stop.address_id) {
      // The stop would take the stored address and drop the inline one without a word: refused, as on a stop update.
      const inline = INLINE_ADDRESS_FIELDS.filter((name) => stop[name] !== undefined);
      if (inline.length > 0) {
        throw DomainError.invalid('ADDRESS_AMBIGUOUS', `Stop ${index} gives address_id and ${inline.join(', ')}: give address_id or the address fields, not both`, field('address_id'));
      }
      const address = await em.findOne(AddressSchema, { id: stop.address_id });
      // A customer naming another person's address would see it in their job's answer: absent to them.
      if (!address || (await addressHiddenFrom(em, actor, address.id))) throw new DomainError(404, 'NOT_FOUND', `Address ${stop.address_id} not found`, field('address_id'));
      addresses.set(address.id, address);
    } else if (!stop.point && !(pointsToCome && addressQuery(stop) !== '')) {
      throw DomainError.invalid('STOP_LOCATION_REQUIRED', `Stop ${index} needs an address_id or an inline address with a point`, field('point'));
    }
    if (stop.complete_after && stop.complete_before && Date.parse(stop.complete_before) <= Date.parse(stop.complete_after)) {
      throw DomainError.invalid('INVALID_TIME_WINDOW', `Stop ${index}'s time window ends before it starts`, field('complete_before'));
    }
    const order = stop.order ?? index;
    if (orders.has(order)) throw DomainError.invalid('DUPLICATE_STOP_ORDER', `Two stops have order ${order}`, field('order'));
    orders.add(order);
  }
  return addresses;
}

/** The fields of a stop's inline address, which an `address_id` replaces. */
const INLINE_ADDRESS_FIELDS = ['street_address', 'street_address2', 'city', 'state', 'postal_code', 'country', 'point'] as const;

/** A job's new stops (in order, each with its address) and the addresses created for them, not yet written. */
export type StopDrafts = { stops: { stop: Stop; address: Address | null }[]; newAddresses: Address[]; audits: AuditRecordValues[] };

/**
 * Drafts a job's stops in their initial workflow state, ordered by `order` (else by position), each with its
 * address: a new one for an inline address (with its audit record's values), else the one `known` holds, all plain
 * rows (no ORM entities). Nothing is written or put in the unit of work: the caller inserts the job, its stops and the new addresses together
 * (`insertJobRows`) and the audit records with the command's COMMIT. Every row gets `now` as its timestamps.
 */
export function draftStops(
  actor: AuditActor,
  siteId: string,
  jobId: string,
  workflow: Workflow,
  inputs: StopInput[],
  known: Map<string, Address>,
  now: Date,
): StopDrafts {
  const machine = buildEntityMachine(workflow);
  const snapshot = initialSnapshot(machine);
  const initial = workflow.states.find((s) => s.is_initial)!;
  const ordered = inputs.map((input, index) => ({ input, order: input.order ?? index })).sort((a, b) => a.order - b.order);
  const newAddresses: Address[] = [];
  const audits: AuditRecordValues[] = [];
  const stops = ordered.map(({ input }, position) => {
    let address = input.address_id ? (known.get(input.address_id) ?? null) : null;
    if (!input.address_id) {
      const created = addressRow(siteId, input);
      audits.push(auditRecordValues(actor, { siteId, action: 'create', entityType: 'Address', entityId: created.id, before: null, after: addressAuditSnapshot(created) }));
      created.createdAt = now;
      created.updatedAt = now;
      newAddresses.push(created);
      address = created;
    }
    // A plain row, not an ORM entity: it is inserted with raw SQL (insertJobRows) and never managed.
    const stop: Stop = {
      id: newId('stop'),
      siteId,
      jobId,
      workflowId: workflow.id,
      workflowStateId: initial.id,
      phase: initial.phase,
      version: 1,
      snapshot: persistSnapshot(snapshot),
      type: input.type,
      sortOrder: position,
      addressId: input.address_id ?? address!.id,
      completeAfter: input.complete_after ? new Date(input.complete_after) : null,
      completeBefore: input.complete_before ? new Date(input.complete_before) : null,
      contactName: input.contact_name ?? null,
      contactPhone: input.contact_phone ?? null,
      contactPhoneCountry: input.contact_phone_country ?? null,
      customerNotes: input.customer_notes ?? null,
      driverNotes: input.driver_notes ?? null,
      internalNotes: input.internal_notes ?? null,
      cancellationNotes: null,
      completedAt: null,
      customFields: {},
      createdAt: now,
      updatedAt: now,
    };
    return { stop, address };
  });
  return { stops, newAddresses, audits };
}
