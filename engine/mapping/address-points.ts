import type { AddressInput } from '../admin/address.service.ts';
import { DomainError } from '../domain-error.ts';
import type { MappingProvider } from './mapping-provider.ts';

/** An address given without a point, and the request field its point would be (`point`, `stops.1.point`). */
export type PointlessAddress = { address: AddressInput; field: string };

/** An address's free text as one geocoding query ("12 Rue de Rivoli, 75004, Paris, France"); empty without any. */
export function addressQuery(address: AddressInput): string {
  return [address.street_address, address.street_address2, address.postal_code, address.city, address.state, address.country]
    .map((part) => part?.trim())
    .filter(Boolean)
    .join(', ');
}

/**
 * The addresses of a request that need a point and have text to find it by: given without a point and without an
 * `address_id` (a stop naming a stored address has its point already).
 */
export function addressesToLocate(addresses: (PointlessAddress & { address: AddressInput & { address_id?: string } })[]): PointlessAddress[] {
  return addresses.filter(({ address }) => !address.point && !address.address_id && addressQuery(address) !== '');
}

/**
 * Gives each address its point from the site's geocoder (its best match), before the command that stores them runs:
 * a remote engine is never called inside a transaction. The store then refuses what is still without a point
 * (POINT_REQUIRED). A provider without address data (the offline one, OSRM alone) leaves them as they are.
 * @throws DomainError 422 ADDRESS_NOT_FOUND naming the field when the geocoder finds no match; 502 MAPPING_PROVIDER_ERROR
 */
export async function locateAddresses(provider: MappingProvider, addresses: PointlessAddress[]): Promise<void> {
  for (const { address, field } of addresses) {
    let matches;
    try {
      matches = await provider.geocode(addressQuery(address));
    } catch (error) {
      if (error instanceof DomainError && error.code === 'GEOCODING_UNAVAILABLE') return;
      // A text longer than the geocoder takes (Nominatim: 500 characters) names the request's field, not `query`.
      if (error instanceof DomainError && error.code === 'INVALID_GEOCODE_QUERY') {
        throw new DomainError(422, 'ADDRESS_NOT_FOUND', `The address text cannot be looked up (${error.message}): give its point {lat, lng}`, field);
      }
      throw error;
    }
    const best = matches[0];
    if (!best) throw new DomainError(422, 'ADDRESS_NOT_FOUND', `No place matches "${addressQuery(address)}": give its point {lat, lng}`, field);
    address.point = { lat: best.point.lat, lng: best.point.lng };
  }
}
