import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { AddressSchema } from '../../persistence/entities/address.entity.ts';
import type { CustomFieldValues } from '../../persistence/entities/custom-field-definition.entity.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { UserSchema, type User } from '../../persistence/entities/user.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { auditSnapshot, containsPattern } from '../admin/patch.ts';
import { createUser } from '../admin/user.service.ts';
import { DomainError } from '../domain-error.ts';
import type { CustomerView } from './customer-admin.ts';

/** How a job names its customer: an existing customer's user id, or contact details to find or create one. */
export type CustomerInput = {
  customer_user_id?: string;
  email?: string;
  first_name?: string;
  last_name?: string;
  phone?: string;
  phone_country?: string;
};

/**
 * An existing user found by a customer email, with what decides whether a job may simply name them: the account's
 * flags and their customer profile on this site (`profileActive` null: they have none yet).
 */
export type KnownCustomer = { id: string; isServiceAccount: boolean; isActive: boolean; profileActive: boolean | null };

/**
 * What `findOrCreateCustomer` answers for a user already read by email, without reading them again: the user when
 * they are an active, regular customer of this site; null when that function must decide (create, refuse, or add
 * this site's profile). Keep the two in step.
 */
export function knownActiveCustomer(known: KnownCustomer | null): { id: string } | null {
  return known && !known.isServiceAccount && known.isActive && known.profileActive === true ? { id: known.id } : null;
}

/**
 * Resolves a job's customer on a site. `customer_user_id` wins over `email` and must be an active customer of the
 * site. By email: an existing user is reused (given a customer profile on this site if they have none) and their
 * account is left as it is, since users are shared between sites and a job on one site must not rename a person
 * on another; an unknown email becomes a new user with a customer profile. Writes are audited and flushed.
 * @returns the customer's user
 * @throws DomainError 404 NOT_FOUND (field `customer_user_id`) for an id that is not an active customer here;
 *   409 CUSTOMER_INACTIVE / EMAIL_TAKEN (field `customer_email`) for a deactivated customer or user, or an API
 *   key's service account; 400 CUSTOMER_REQUIRED when neither an id nor an email is given, 400 INVALID_EMAIL
 *   (field `customer_email`) for an address on the reserved .invalid domain
 */
export async function findOrCreateCustomer(em: EntityManager, actor: AuditActor, siteId: string, input: CustomerInput): Promise<User> {
  if (input.customer_user_id) return activeCustomer(em, siteId, input.customer_user_id);
  if (!input.email) {
    throw DomainError.invalid('CUSTOMER_REQUIRED', 'customer_user_id or customer_email is required', 'customer_user_id');
  }
  const email = input.email.toLowerCase();
  // API keys' service accounts live on the reserved .invalid TLD (RFC 2606) and no real person can, so it is
  // refused outright (service-account emails keep upper-case ULIDs, which a lower-cased lookup would miss).
  if (email.endsWith('.invalid')) throw DomainError.invalid('INVALID_EMAIL', `${email} cannot receive mail`, 'customer_email');
  let existing = await em.findOne(UserSchema, { email });
  if (!existing) {
    try {
      const view = await createUser(em, actor, { siteId }, {
        email,
        first_name: input.first_name,
        last_name: input.last_name,
        phone: input.phone,
        phone_country: input.phone_country,
        role: 'customer',
      });
      return view.user;
    } catch (error) {
      // Another command (a concurrent job for the same new customer) committed this user between the lookup and
      // createUser's check, which as a later statement sees it: find it as if it had been there all along.
      if (!(error instanceof DomainError && error.code === 'EMAIL_TAKEN')) throw error;
      existing = await em.findOneOrFail(UserSchema, { email });
    }
  }
  if (existing.isServiceAccount || existing.isPlatformOperator) {
    throw new DomainError(409, 'EMAIL_TAKEN', `${email} belongs to an API key or a platform operator and cannot be a customer`, 'customer_email');
  }
  const profile = await em.findOne(UserProfileSchema, { siteId, userId: existing.id, role: 'customer' });
  if (!existing.isActive || (profile && !profile.isActive)) {
    throw new DomainError(409, 'CUSTOMER_INACTIVE', `The customer ${email} is deactivated`, 'customer_email');
  }
  if (!profile) {
    const created = em.create(UserProfileSchema, { id: newId('profile'), siteId, userId: existing.id, role: 'customer', isActive: true });
    recordAudit(em, actor, { siteId, action: 'create', entityType: 'UserProfile', entityId: created.id, before: null, after: auditSnapshot(created) });
    await em.flush();
  }
  return existing;
}

/**
 * The site's customers (API keys' service accounts excluded): active ones unless `is_active` says otherwise. `q`
 * matches email, names and phone; `custom_fields` keeps customers whose values contain all the given ones.
 */
export async function searchCustomers(
  em: EntityManager,
  siteId: string,
  filter: { q?: string; is_active?: boolean; custom_fields?: CustomFieldValues },
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[CustomerView[], number]> {
  // A customer is inactive when their profile here or their account is (as GET /customer reports is_active).
  const inactive = filter.is_active === false;
  const customerIds = (profileActive?: boolean) => {
    const query = em.createQueryBuilder(UserProfileSchema, 'p').select('p.user_id').where({ siteId, role: 'customer', ...(profileActive === undefined ? {} : { isActive: profileActive }) });
    if (filter.custom_fields) query.andWhere('p.custom_fields @> ?::jsonb', [JSON.stringify(filter.custom_fields)]);
    return query.getKnexQuery();
  };
  const where: Record<string, unknown> = { id: { $in: customerIds(inactive ? undefined : true) }, isServiceAccount: false };
  const conditions: Record<string, unknown>[] = [];
  if (inactive) conditions.push({ $or: [{ isActive: false }, { id: { $in: customerIds(false) } }] });
  else where.isActive = true;
  if (filter.q) {
    const pattern = containsPattern(filter.q);
    conditions.push({ $or: ['email', 'firstName', 'lastName', 'phone'].map((field) => ({ [field]: { $ilike: pattern } })) });
  }
  if (conditions.length > 0) where.$and = conditions;
  const [users, total] = await em.findAndCount(UserSchema, where, page);
  if (users.length === 0) return [[], total];
  const ids = users.map((u) => u.id);
  const customerProfiles = await em.find(UserProfileSchema, { userId: { $in: ids }, role: 'customer' }, { orderBy: { createdAt: 'asc' } });
  const addressIds = users.flatMap((u) => (u.homeAddressId ? [u.homeAddressId] : []));
  const addresses = addressIds.length ? await em.find(AddressSchema, { id: { $in: addressIds } }) : [];
  const views = users.flatMap((user) => {
    const profile = customerProfiles.find((p) => p.userId === user.id);
    return profile ? [{ user, profile, homeAddress: addresses.find((a) => a.id === user.homeAddressId) ?? null }] : [];
  });
  return [views, total];
}

async function activeCustomer(em: EntityManager, siteId: string, userId: string): Promise<User> {
  const user = await em.findOne(UserSchema, { id: userId, isServiceAccount: false });
  const profile = user ? await em.findOne(UserProfileSchema, { siteId, userId, role: 'customer' }) : null;
  if (!user || !profile) throw new DomainError(404, 'NOT_FOUND', `Customer ${userId} not found`, 'customer_user_id');
  // A customer GET /customer reports as inactive is that, not missing: as a job naming them by email is told.
  if (!user.isActive || !profile.isActive) throw new DomainError(409, 'CUSTOMER_INACTIVE', `Customer ${userId} is deactivated`, 'customer_user_id');
  return user;
}
