import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { AddressSchema, type Address } from '../../persistence/entities/address.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { DomainError } from '../domain-error.ts';
import { applyPatch, auditSnapshot, containsPattern } from './patch.ts';

export type AddressInput = {
  street_address?: string;
  street_address2?: string;
  city?: string;
  state?: string;
  postal_code?: string;
  country?: string;
  point?: { lat: number; lng: number };
};

const UPDATABLE = {
  street_address: 'streetAddress',
  street_address2: 'streetAddress2',
  city: 'city',
  state: 'state',
  postal_code: 'postalCode',
  country: 'country',
} as const;

/**
 * Stores an address for a site (null: a global address, platform only). Street number and name are split from
 * the first line when it starts with a number ("12 Rue de Rivoli").
 * @throws DomainError 400 POINT_REQUIRED: without a geocoding integration a point must be given
 */
export async function createAddress(
  em: EntityManager,
  actor: AuditActor,
  siteId: string | null,
  input: AddressInput,
): Promise<Address> {
  const address = draftAddress(em, siteId, input);
  em.persist(address);
  recordAudit(em, actor, { siteId, action: 'create', entityType: 'Address', entityId: address.id, before: null, after: addressAuditSnapshot(address) });
  await em.flush();
  return address;
}

/**
 * The address {@link createAddress} stores, as an ORM entity not yet in the unit of work (its flush sets the
 * timestamps).
 * @throws DomainError 400 POINT_REQUIRED
 */
function draftAddress(em: EntityManager, siteId: string | null, input: AddressInput): Address {
  const address = em.create(AddressSchema, addressFields(siteId, input), { persist: false });
  refreshDerivedFields(address);
  return address;
}

/**
 * The same address as a plain row, for a caller that inserts it with raw SQL and never hands it to the ORM (a job's
 * new stop addresses, `insertJobRows`): the same fields, without building an ORM entity (with the job's and its
 * stops', ~10% of a job creation's CPU).
 * @throws DomainError 400 POINT_REQUIRED
 */
export function addressRow(siteId: string | null, input: AddressInput): Address {
  // Only the fields the entity would hold: those left unset stay absent, as on the entity, so the audit record of a
  // new address lists the same fields as POST /address's (the insert writes null for them).
  const address = addressFields(siteId, input) as unknown as Address;
  refreshDerivedFields(address);
  return address;
}

function addressFields(siteId: string | null, input: AddressInput) {
  if (!input.point) {
    throw DomainError.invalid('POINT_REQUIRED', 'point {lat, lng} is required: this site has no geocoding integration', 'point');
  }
  return {
    id: newId('address'),
    siteId,
    lat: input.point.lat,
    lng: input.point.lng,
    streetAddress: input.street_address ?? null,
    streetAddress2: input.street_address2 ?? null,
    city: input.city ?? null,
    state: input.state ?? null,
    postalCode: input.postal_code ?? null,
    country: input.country ?? null,
    source: 'manual',
    types: [],
    formattedName: '',
    formattedNameShort: '',
  };
}

/** What a new address's audit record shows: the fields set on creation, without the timestamps. */
export function addressAuditSnapshot(address: Address): Record<string, unknown> {
  const { createdAt: _created, updatedAt: _updated, ...fields } = address;
  return auditSnapshot(fields);
}

/** @throws DomainError 404 when absent or another site's */
export async function getAddress(em: EntityManager, id: string): Promise<Address> {
  const address = await em.findOne(AddressSchema, { id });
  if (!address) throw DomainError.notFound('Address', id);
  return address;
}

/** @throws DomainError 403 when a site tries to change a global address */
export async function updateAddress(
  em: EntityManager,
  actor: AuditActor,
  siteId: string | null,
  patch: { id: string; point?: { lat: number; lng: number } } & Record<string, unknown>,
): Promise<Address> {
  const address = await getAddress(em, patch.id);
  if ((address.siteId ?? null) !== siteId) throw new DomainError(403, 'GLOBAL_ADDRESS', 'Global addresses are read-only for sites');
  const before = auditSnapshot(address);
  applyPatch(address, patch, UPDATABLE);
  if (patch.point) {
    address.lat = patch.point.lat;
    address.lng = patch.point.lng;
  }
  refreshDerivedFields(address);
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'Address', entityId: address.id, before, after: auditSnapshot(address) });
  await em.flush();
  return address;
}

export async function searchAddresses(
  em: EntityManager,
  filter: { q?: string; city?: string; postal_code?: string },
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[Address[], number]> {
  return em.findAndCount(
    AddressSchema,
    {
      ...(filter.q ? { formattedName: { $ilike: containsPattern(filter.q) } } : {}),
      ...(filter.city ? { city: { $ilike: filter.city } } : {}),
      ...(filter.postal_code ? { postalCode: filter.postal_code } : {}),
    },
    page,
  );
}

function refreshDerivedFields(address: Address): void {
  const match = /^(\d+[A-Za-z]?)[,\s]+(.+)$/.exec(address.streetAddress ?? '');
  address.houseNumber = match?.[1] ?? null;
  address.street = match?.[2] ?? address.streetAddress ?? null;
  const region = [address.postalCode, address.city].filter(Boolean).join(' ');
  const parts = [address.streetAddress, address.streetAddress2, region, address.state, address.country].filter(Boolean);
  const coordinates = `${Number(address.lat).toFixed(6)}, ${Number(address.lng).toFixed(6)}`;
  address.formattedName = parts.length > 0 ? parts.join(', ') : coordinates;
  address.formattedNameShort = [address.streetAddress, address.city].filter(Boolean).join(', ') || address.formattedName;
}
