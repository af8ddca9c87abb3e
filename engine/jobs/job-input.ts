import type { AddressInput } from '../admin/address.service.ts';
import type { ActingRole } from '../../machines/entity-machine.ts';
import type { CustomFieldInput } from '../customfields/custom-field-values.ts';

/** Most stops a job may have (the spec leaves it open; a route of 200 stops is already a long day). */
export const MAX_STOPS_PER_JOB = 200;
/** Most ids one bulk request may name. */
export const MAX_BULK_IDS = 500;

/** A stop: `address_id`, or the inline address fields of {@link AddressInput} with a point. */
export type StopInput = AddressInput & {
  type: string;
  order?: number;
  address_id?: string;
  complete_after?: string;
  complete_before?: string;
  contact_name?: string;
  contact_phone?: string;
  contact_phone_country?: string;
  customer_notes?: string;
  driver_notes?: string;
  internal_notes?: string;
  custom_fields?: CustomFieldInput;
};

export type JobInput = {
  customer_user_id?: string;
  customer_first_name?: string;
  customer_last_name?: string;
  customer_email?: string;
  customer_phone?: string;
  customer_phone_country?: string;
  service_type_id?: string;
  estimate_id?: string;
  driver_user_id?: string;
  option_ids?: string[];
  customer_notes?: string;
  driver_notes?: string;
  internal_notes?: string;
  payment_method?: string;
  override_zone_restriction?: boolean;
  custom_fields?: CustomFieldInput;
  stops: StopInput[];
};

/** A stop's editable details; for nullable ones `null` clears. */
/** An address's text fields as a stop update may change them (null clears one); its point stays. */
export type AddressTextUpdate = {
  street_address?: string | null;
  street_address2?: string | null;
  city?: string | null;
  state?: string | null;
  postal_code?: string | null;
  country?: string | null;
};

export type StopUpdate = AddressTextUpdate & {
  id: string;
  type?: string;
  address_id?: string;
  complete_after?: string | null;
  complete_before?: string | null;
  contact_name?: string | null;
  contact_phone?: string | null;
  contact_phone_country?: string | null;
  customer_notes?: string | null;
  driver_notes?: string | null;
  internal_notes?: string | null;
  custom_fields?: CustomFieldInput | null;
};

export type JobUpdate = {
  customer_user_id?: string;
  customer_notes?: string | null;
  driver_notes?: string | null;
  internal_notes?: string | null;
  payment_method?: string | null;
  option_ids?: string[] | null;
  custom_fields?: CustomFieldInput | null;
  stops?: StopUpdate[];
  /** Staff only: a stop may move to an address in a banned zone (ignored for customers, who are always refused). */
  override_zone_restriction?: boolean;
};

/** Who is acting on jobs, and what that limits: customers see and create only their own jobs, drivers see theirs. */
export type JobActor = { userId: string | null; applicationId: string | null; requestId: string | null; role: ActingRole };

export function isStaff(role: ActingRole): boolean {
  return role === 'admin' || role === 'dispatcher' || role === 'system';
}
