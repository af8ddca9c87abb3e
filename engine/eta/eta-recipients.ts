import type { EntityManager } from '@mikro-orm/postgresql';
import type { EtaDeliveryMethod, EtaRecipientType } from '../../persistence/entities/eta-notification-config.entity.ts';
import { nameOnFile } from '../admin/user-name.ts';
import type { ItineraryStop } from './eta-itinerary.ts';

/**
 * A person an ETA notification may go to, with the addresses each channel needs. `name` is null when they gave none
 * (never their email: the customer's name goes into the driver's messages as `{{customer_name}}`).
 */
export type Recipient = { userId: string; name: string | null; email: string | null; phone: string | null };

type UserRow = { id: string; email: string; phone: string | null; first_name: string | null; last_name: string | null; display_name: string | null; is_service_account: boolean };

const USER_COLUMNS = 'u.id, u.email, u.phone, u.first_name, u.last_name, u.display_name, u.is_service_account';

/**
 * Who a config's recipient type means for a stop: the job's customer, the driver driving it, or every active admin
 * of the site. API keys' service accounts are never recipients (nobody reads their mail).
 */
export async function recipientsFor(em: EntityManager, siteId: string, type: EtaRecipientType, stop: ItineraryStop, driverUserId: string): Promise<Recipient[]> {
  let rows: UserRow[];
  if (type === 'admin') {
    rows = await em.execute<UserRow[]>(
      `select ${USER_COLUMNS} from user_profile p join app_user u on u.id = p.user_id
       where p.site_id = ? and p.role = 'admin' and p.is_active and u.is_active order by u.id`,
      [siteId],
    );
  } else {
    const userId = type === 'driver' ? driverUserId : stop.customerUserId;
    if (!userId) return [];
    rows = await em.execute<UserRow[]>(`select ${USER_COLUMNS} from app_user u where u.id = ? and u.is_active`, [userId]);
  }
  return rows
    .filter((row) => !row.is_service_account)
    .map((row) => ({
      userId: row.id,
      name: nameOnFile(row),
      email: row.email,
      // A customer without a phone on file is reached at the stop's contact number, when it has one.
      phone: row.phone ?? (type === 'customer' ? stop.contactPhone : null),
    }));
}

/** The `to` of a message by channel: an email address, a phone number, or (push) the user id; null when unknown. */
export function addressFor(method: EtaDeliveryMethod, recipient: Recipient): string | null {
  if (method === 'email') return recipient.email;
  if (method === 'sms') return recipient.phone;
  return recipient.userId;
}
