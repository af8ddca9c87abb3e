import type { EntityManager } from '@mikro-orm/postgresql';
import type { AuditActor } from '../../persistence/audit.ts';
import { JobSchema } from '../../persistence/entities/job.entity.ts';
import type { ActingRole } from '../../machines/entity-machine.ts';
import { DomainError } from '../domain-error.ts';
import { enforceBannedZonesAt, recordZoneOverride } from '../fleet/zone-rules.ts';

/** Where an address is in use: by someone else (another user's home, a stop of another customer's job), and under open stops. */
type AddressUse = { shared: boolean; open_stops: { job_id: string; sort_order: number }[] };

/**
 * The rules of PUT /address on a site's address, checked before it changes:
 * - a customer changes only an address nobody else uses: not another user's home address, not the site's or the
 *   organization's, not a stop of a job of another customer (an address id seen on one's own job must not let one
 *   move someone else's delivery);
 * - a point moved under an open stop follows the banned-zone rule of that stop's job: refused in a banned zone for
 *   customers always, for staff unless `override` (the jobs then carry the override, each audited as `zone_override`).
 * @throws DomainError 403 ADDRESS_IN_USE, 422 ZONE_RESTRICTED naming `point`
 */
export async function checkAddressChange(
  em: EntityManager,
  siteId: string,
  actor: AuditActor & { role: ActingRole },
  change: { id: string; point?: { lat: number; lng: number } },
  override: boolean,
): Promise<void> {
  await lockAddress(em, change.id);
  const [use] = await em.execute<AddressUse[]>(
    `select exists (select 1 from app_user u where u.home_address_id = ? and u.id is distinct from ?)
         or exists (select 1 from site st where st.address_id = ?) or exists (select 1 from organization o where o.address_id = ?)
         or exists (select 1 from stop s join job j on j.id = s.job_id and j.site_id = s.site_id
           where s.address_id = ? and s.site_id = ? and j.customer_user_id is distinct from ?) as shared,
       (select coalesce(json_agg(json_build_object('job_id', s.job_id, 'sort_order', s.sort_order) order by s.job_id, s.sort_order), '[]'::json)
         from stop s join job j on j.id = s.job_id and j.site_id = s.site_id
         where s.address_id = ? and s.site_id = ? and s.phase not in ('completed', 'cancelled') and j.deleted_at is null) as open_stops`,
    [change.id, actor.userId, change.id, change.id, change.id, siteId, actor.userId, change.id, siteId],
  );
  if (actor.role === 'customer' && use?.shared) {
    throw new DomainError(403, 'ADDRESS_IN_USE', `Address ${change.id} is used by another user or another customer's job; a customer changes only their own addresses`, 'id');
  }
  const stops = use?.open_stops ?? [];
  if (!change.point || stops.length === 0) return;
  const place = { stopIndex: stops[0]!.sort_order, ...change.point };
  const overridden = await enforceBannedZonesAt(em, siteId, actor.role, place, override, 'point');
  if (overridden.length === 0) return;
  const jobIds = [...new Set(stops.map((stop) => stop.job_id))];
  await em.nativeUpdate(JobSchema, { id: { $in: jobIds } }, { zoneOverride: true });
  for (const jobId of jobIds) {
    const hits = stops.filter((stop) => stop.job_id === jobId).flatMap((stop) => overridden.map((hit) => ({ ...hit, stopIndex: stop.sort_order })));
    recordZoneOverride(em, actor, siteId, jobId, hits);
  }
}

/**
 * Takes an address's turn until the transaction ends: PUT /address and a stop moved onto the address both take it
 * before they read, so of a move and a change of the point at once the second sees the first's, and neither slips
 * past the zone check. An advisory lock rather than a row lock: a stop may use a global address, which row-level
 * security lets a site read but not lock.
 */
export async function lockAddress(em: EntityManager, addressId: string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(hashtext(?))', [`address:${addressId}`]);
}
