import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../domain-error.ts';

/** The customer figures of a site over a [from, to) time range. */
export type CustomerMetrics = {
  /** Distinct customers with at least one job created in the range (deleted jobs excluded). */
  active_in_range: number;
  /** Customers who became customers of the site (their customer profile was created) in the range. */
  new_in_range: number;
  /** Active customers of the site who became customers before the end of the range. */
  total_customers: number;
  /** Share of the range's jobs (by creation time) that are cancelled, 0..1 with 4 decimals; 0 without jobs. */
  customer_cancellation_rate: number;
};

/**
 * Computes a site's customer metrics in one statement (API keys' service accounts are not customers).
 * @throws DomainError 400 INVALID_RANGE (field `from`) when the range is empty or reversed
 */
export async function customerMetrics(em: EntityManager, siteId: string, from: Date, to: Date): Promise<CustomerMetrics> {
  if (!(from < to)) throw DomainError.invalid('INVALID_RANGE', 'from must be before to', 'from');
  const [row] = await em.execute<{ active: string; fresh: string; total: string; jobs: string; cancelled: string }[]>(
    `with customers as (
       select p.user_id, p.is_active, p.created_at from user_profile p join app_user u on u.id = p.user_id
       where p.site_id = ? and p.role = 'customer' and not u.is_service_account),
     range_jobs as (
       select customer_user_id, phase from job where site_id = ? and deleted_at is null and created_at >= ? and created_at < ?)
     select
       (select count(distinct customer_user_id) from range_jobs where customer_user_id in (select user_id from customers)) as active,
       (select count(*) from customers where created_at >= ? and created_at < ?) as fresh,
       (select count(*) from customers where is_active and created_at < ?) as total,
       (select count(*) from range_jobs) as jobs,
       (select count(*) from range_jobs where phase = 'cancelled') as cancelled`,
    [siteId, siteId, from, to, from, to, to],
  );
  const jobs = Number(row?.jobs ?? 0);
  const cancelled = Number(row?.cancelled ?? 0);
  return {
    active_in_range: Number(row?.active ?? 0),
    new_in_range: Number(row?.fresh ?? 0),
    total_customers: Number(row?.total ?? 0),
    customer_cancellation_rate: jobs === 0 ? 0 : Math.round((cancelled / jobs) * 10_000) / 10_000,
  };
}
