import type { EntityManager } from '@mikro-orm/postgresql';
import { addressesToLocate, locateAddresses, type PointlessAddress } from '../engine/mapping/address-points.ts';
import type { AddressInput } from '../engine/admin/address.service.ts';
import type { MappingProvider } from '../engine/mapping/mapping-provider.ts';
import { mappingProviderForSite } from '../engine/mapping/site-provider.ts';
import type { OperationContext } from './operation.ts';
import { requireSite } from './tenancy.ts';
import { mappingPolicyOf } from '../engine/eta/eta-check.ts';

type Context = OperationContext<unknown, unknown, unknown>;

/** The site's mapping provider, its integration read in a short transaction: the engine's network calls happen after it has ended. */
export function siteMappingProvider(ctx: Context): Promise<MappingProvider> {
  const site = requireSite(ctx.site);
  const { config, crypto } = ctx.services;
  const policy = mappingPolicyOf(config);
  return ctx.transaction((em) => mappingProviderForSite(em, crypto, site.id, policy));
}

/**
 * Gives the request's addresses that came without a point (and without an `address_id`) their point from the site's
 * geocoder, before the request's command runs (see `locateAddresses`); nothing is read when every address has one.
 * `checkFirst`, the command's own checks of its input (reads only), runs first in a transaction of its own: a request
 * the command would refuse gets that answer and costs no lookup. The command runs them again on the located request.
 * @throws what `checkFirst` throws; DomainError 422 ADDRESS_NOT_FOUND naming the field, 502 MAPPING_PROVIDER_ERROR
 */
export async function locateRequestAddresses(
  ctx: Context,
  addresses: (PointlessAddress & { address: AddressInput & { address_id?: string } })[],
  checkFirst?: (em: EntityManager) => Promise<unknown>,
): Promise<void> {
  const pending = addressesToLocate(addresses);
  if (pending.length === 0 || !ctx.site) return;
  if (checkFirst) await ctx.transaction(checkFirst);
  await locateAddresses(await siteMappingProvider(ctx), pending);
}

/** A request's `home_address` to locate: none when `home_address_id` is given too (it wins, the text is not stored). */
export function homeAddressToLocate(body: { home_address?: AddressInput; home_address_id?: string }): PointlessAddress[] {
  return body.home_address && body.home_address_id === undefined ? [{ address: body.home_address, field: 'home_address.point' }] : [];
}
