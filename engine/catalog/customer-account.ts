import type { EntityManager } from '@mikro-orm/postgresql';
import type { AuditActor } from '../../persistence/audit.ts';
import type { User } from '../../persistence/entities/user.entity.ts';
import { updateUser } from '../admin/user.service.ts';
import { DomainError } from '../domain-error.ts';
import type { CreateCustomerInput } from './customer-admin.ts';

/** The fields of POST /customer that belong to the (shared) account rather than to this site's customer profile. */
const ACCOUNT_FIELDS = ['password', 'first_name', 'last_name', 'phone', 'phone_country', 'home_address', 'home_address_id'] as const;

/** The account fields a request gives (`null` is no value on a create, as for a new user). */
function givenAccountFields(input: CreateCustomerInput): (typeof ACCOUNT_FIELDS)[number][] {
  return ACCOUNT_FIELDS.filter((name) => input[name] !== undefined && input[name] !== null);
}

/**
 * An existing user taken on as a customer gets the account fields the request gives only when their account is this
 * site's to change, by the rule PUT /customer follows: the site where their first profile is
 * (`account_owned_elsewhere`, migration 0040), and not this site's own staff (whose account an admin changes with
 * PUT /user). Otherwise the request is refused rather than half applied.
 * @throws DomainError 409 ACCOUNT_SHARED naming each account field given
 */
export async function assertAccountFieldsSettable(em: EntityManager, siteId: string, user: User, input: CreateCustomerInput): Promise<void> {
  const given = givenAccountFields(input);
  if (given.length === 0) return;
  const [row] = await em.execute<{ shared: boolean; staff: string | null }[]>(
    `select account_owned_elsewhere(?, ?) as shared,
      (select role from user_profile where site_id = ? and user_id = ? and role <> 'customer' limit 1) as staff`,
    [user.id, siteId, siteId, user.id],
  );
  if (!row?.shared && !row?.staff) return;
  const why = row.staff ? `is also a ${row.staff} of this site (an admin changes their account with PUT /user)` : 'belonged elsewhere first (another site, the platform or an API key)';
  const fields = given.map((field) => ({ field, message: `cannot be set: the account of ${user.email} ${why}` }));
  throw new DomainError(409, 'ACCOUNT_SHARED', `${user.email} ${why}: ${given.join(', ')} cannot be set on their account; send the request without them`, given[0], undefined, fields);
}

/**
 * Sets the account fields a request gives on an existing user just taken on as a customer, as PUT /customer would
 * (a password ends their sessions and signs in on this site only). Call assertAccountFieldsSettable first, and flush
 * the new customer profile: the update reads the user through it.
 */
export async function applyAccountFields(em: EntityManager, actor: AuditActor, siteId: string, user: User, input: CreateCustomerInput): Promise<void> {
  const given = givenAccountFields(input);
  if (given.length === 0) return;
  await updateUser(em, actor, { siteId }, { id: user.id, ...Object.fromEntries(given.map((name) => [name, input[name]])) });
}
