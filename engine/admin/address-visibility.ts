import type { EntityManager } from '@mikro-orm/postgresql';
import type { ActingRole } from '../../machines/entity-machine.ts';

/**
 * Whether an address of the site is someone else's for this actor, so that reading it (GET /address) or naming it
 * (a stop's `address_id`) would show them another person's place. Staff see every address of their site. A customer
 * does not see another user's home address, nor a stop's of another customer's job; a driver sees the stops of jobs
 * given to them and their own home. Row-level security keeps other sites' addresses out already.
 */
export async function addressHiddenFrom(em: EntityManager, actor: { userId: string | null; role: ActingRole | 'platform' }, addressId: string): Promise<boolean> {
  if (actor.role !== 'customer' && actor.role !== 'driver') return false;
  const sql =
    actor.role === 'customer'
      ? `select exists (select 1 from app_user u where u.home_address_id = ? and u.id is distinct from ?)
           or exists (select 1 from stop s join job j on j.id = s.job_id and j.site_id = s.site_id
             where s.address_id = ? and j.customer_user_id is distinct from ?) as hidden`
      : `select not (exists (select 1 from app_user u where u.home_address_id = ? and u.id = ?)
           or exists (select 1 from stop s join job j on j.id = s.job_id and j.site_id = s.site_id
             where s.address_id = ? and j.driver_user_id = ?)) as hidden`;
  const [row] = await em.execute<{ hidden: boolean }[]>(sql, [addressId, actor.userId, addressId, actor.userId]);
  return row?.hidden === true;
}
