import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { AddressSchema, type Address } from '../../persistence/entities/address.entity.ts';
import type { CustomFieldValues } from '../../persistence/entities/custom-field-definition.entity.ts';
import { UserProfileSchema, type UserProfile } from '../../persistence/entities/user-profile.entity.ts';
import { UserSchema, type User } from '../../persistence/entities/user.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { createAddress, type AddressInput } from '../admin/address.service.ts';
import { auditSnapshot } from '../admin/patch.ts';
import { createUser, updateUser } from '../admin/user.service.ts';
import { revokeProfileSessions } from '../admin/user-sessions.ts';
import { loadDefinitions, resolveCustomFields, type CustomFieldInput } from '../customfields/custom-field-values.ts';
import { DomainError } from '../domain-error.ts';
import { applyAccountFields, assertAccountFieldsSettable } from './customer-account.ts';

/** A customer of a site: their (shared) user account, their customer profile here, and their home address. */
export type CustomerView = { user: User; profile: UserProfile; homeAddress: Address | null };

type AccountFields = {
  first_name?: string | null;
  last_name?: string | null;
  phone?: string | null;
  phone_country?: string | null;
  home_address?: AddressInput;
  home_address_id?: string;
  custom_fields?: CustomFieldInput;
};

export type CreateCustomerInput = AccountFields & { email: string; password?: string };
export type UpdateCustomerInput = AccountFields & { id: string; email?: string; password?: string; is_active?: boolean };

/**
 * Adds a customer to the site. An unknown email becomes a new user with a customer profile here. A known one
 * (a customer of another site, say) gets a customer profile here; the account fields given (password, names, phone,
 * home address) are set on their account as for a new user when it is this site's to change, else the request is
 * refused (users are shared between sites: `assertAccountFieldsSettable`). `home_address_id` wins over
 * `home_address`. Custom field values are checked (required ones included) before anything is written.
 * @throws DomainError 409 CUSTOMER_EXISTS / EMAIL_TAKEN (field `email`), 409 ACCOUNT_SHARED naming the account fields
 *   given for an account another site owns, 400 INVALID_EMAIL, 404 for an unknown `home_address_id`, 400 naming
 *   `custom_fields.<key>`
 */
export async function createCustomer(em: EntityManager, actor: AuditActor, siteId: string, input: CreateCustomerInput): Promise<CustomerView> {
  const { email, customFields, existing } = await checkNewCustomer(em, siteId, input);
  let user: User;
  let profile: UserProfile;
  if (existing) {
    user = existing;
    profile = em.create(UserProfileSchema, { id: newId('profile'), siteId, userId: user.id, role: 'customer', isActive: true, customFields });
  } else {
    const view = await createUser(em, actor, { siteId }, {
      email,
      password: input.password,
      first_name: input.first_name ?? undefined,
      last_name: input.last_name ?? undefined,
      phone: input.phone ?? undefined,
      phone_country: input.phone_country ?? undefined,
      role: 'customer',
    });
    user = view.user;
    profile = view.profiles[0]!;
    profile.customFields = customFields;
    if (input.home_address_id) user.homeAddressId = input.home_address_id;
    else if (input.home_address) user.homeAddressId = (await createAddress(em, actor, siteId, input.home_address)).id;
  }
  await em.flush();
  if (existing) await applyAccountFields(em, actor, siteId, user, input);
  const view = { user, profile, homeAddress: await homeAddressOf(em, user) };
  recordAudit(em, actor, { siteId, action: 'create', entityType: 'Customer', entityId: user.id, before: null, after: customerSnapshot(view) });
  await em.flush();
  return view;
}

/**
 * What createCustomer checks of a request before it writes anything, and what those checks read. It only reads, so
 * a request can be checked before its home address is located: no geocoder is called for one that would be refused.
 * @throws DomainError as createCustomer
 */
export async function checkNewCustomer(em: EntityManager, siteId: string, input: CreateCustomerInput): Promise<{ email: string; customFields: CustomFieldValues; existing: User | null }> {
  const customFields = resolveCustomFields(await loadDefinitions(em, 'customer'), null, input.custom_fields);
  const email = input.email.toLowerCase();
  if (email.endsWith('.invalid')) throw DomainError.invalid('INVALID_EMAIL', `${email} cannot receive mail`, 'email');
  if (input.home_address_id && !(await em.findOne(AddressSchema, { id: input.home_address_id }))) {
    throw new DomainError(404, 'NOT_FOUND', `Address ${input.home_address_id} not found`, 'home_address_id');
  }
  const existing = await em.findOne(UserSchema, { email });
  if (existing) {
    if (existing.isServiceAccount || existing.isPlatformOperator) throw new DomainError(409, 'EMAIL_TAKEN', `${email} belongs to an API key or a platform operator`, 'email');
    if (await em.count(UserProfileSchema, { userId: existing.id, role: 'customer' })) {
      throw new DomainError(409, 'CUSTOMER_EXISTS', `${email} is already a customer of this site`, 'email');
    }
    await assertAccountFieldsSettable(em, siteId, existing, input);
  }
  return { email, customFields, existing };
}

/**
 * A customer of this site, active or not.
 * @param lock read the customer profile `for update` (in a transaction), for a change computed from what it holds
 * @throws DomainError 404 when absent or another site's customer
 */
export async function getCustomer(em: EntityManager, id: string, lock = false): Promise<CustomerView> {
  const locking = lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : {};
  const profile = await em.findOne(UserProfileSchema, { userId: id, role: 'customer' }, { orderBy: { createdAt: 'asc' }, ...locking });
  const user = profile ? await em.findOne(UserSchema, { id, isServiceAccount: false }) : null;
  if (!profile || !user) throw DomainError.notFound('Customer', id);
  return { user, profile, homeAddress: await homeAddressOf(em, user) };
}

/**
 * Updates a customer: only supplied fields change (`null` clears a nullable one). `home_address_id` wins over
 * `home_address`; an empty string clears the home address; omitted leaves it. `is_active` and custom fields belong
 * to the customer profile of this site (switching it off ends the sessions signed in on it); the account fields to
 * the user (a new password ends their sessions).
 * Custom fields are checked before anything is written.
 * @throws DomainError 404, 409 EMAIL_TAKEN, 400 naming `custom_fields.<key>`
 */
export async function updateCustomer(em: EntityManager, actor: AuditActor, siteId: string, input: UpdateCustomerInput): Promise<CustomerView> {
  // Locked before it is read: the custom fields merge the change into the stored values (see updateWorker).
  const current = await getCustomer(em, input.id, true);
  const before = customerSnapshot(current);
  const customFields = input.custom_fields === undefined
    ? undefined
    : resolveCustomFields(await loadDefinitions(em, 'customer'), current.profile.customFields ?? {}, input.custom_fields);
  const { custom_fields: _values, is_active: isActive, ...account } = input;
  const accountChanges = Object.entries(account).filter(([key, value]) => key !== 'id' && value !== undefined);
  if (accountChanges.length > 0) {
    await assertCustomerOnly(em, siteId, input.id, accountChanges[0]![0]);
    await updateUser(em, actor, { siteId }, account);
  }
  const { profile } = current;
  if (isActive !== undefined) profile.isActive = isActive;
  if (customFields) profile.customFields = customFields;
  await em.flush();
  // Ended, not just refused while inactive: else reactivating the profile would bring its old tokens back to life.
  if (isActive === false) await revokeProfileSessions(em, siteId, profile.id);
  const view = await getCustomer(em, input.id);
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'Customer', entityId: input.id, before, after: customerSnapshot(view) });
  await em.flush();
  return view;
}

/** A customer as audit data. */
export function customerSnapshot(view: CustomerView): Record<string, unknown> {
  return { ...auditSnapshot(view.user), home_address_id: view.user.homeAddressId ?? null, is_active: view.profile.isActive, custom_fields: view.profile.customFields ?? {} };
}

async function homeAddressOf(em: EntityManager, user: User): Promise<Address | null> {
  return user.homeAddressId ? em.findOne(AddressSchema, { id: user.homeAddressId }) : null;
}

/**
 * The customer endpoints change the account of a customer only: one who also works for this site (admin,
 * dispatcher, driver) is changed by an admin with PUT /user, or by themself. Else a dispatcher could give the site's
 * admin a customer profile and then set that admin's password or email through PUT /customer.
 * @throws DomainError 403 ACCOUNT_SHARED naming the field
 */
async function assertCustomerOnly(em: EntityManager, siteId: string, userId: string, field: string): Promise<void> {
  const [staff] = await em.execute<{ role: string }[]>(
    "select role from user_profile where site_id = ? and user_id = ? and role <> 'customer' limit 1",
    [siteId, userId],
  );
  if (staff) {
    throw new DomainError(403, 'ACCOUNT_SHARED', `User ${userId} is also a ${staff.role} of this site: an admin changes their account with PUT /user`, field);
  }
}
