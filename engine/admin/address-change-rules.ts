import type { EntityManager } from '@mikro-orm/postgresql';
import type { AuditActor } from '../../persistence/audit.ts';
import { JobSchema } from '../../persistence/entities/job.entity.ts';
import type { ActingRole } from '../../machines/entity-machine.ts';
import { DomainError } from '../domain-error.ts';
import { enforceBannedZonesAt, recordZoneOverride } from '../fleet/zone-rules.ts';

/** An open stop standing on an address: its job and its place in the job. */
type OpenStop = { job_id: string; sort_order: number };

/** Where an address is in use: by someone else (another user's home, a stop of another customer's job), and under open stops. */
type AddressUse = { shared: boolean; open_stops: OpenStop[] };

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
  if (change.point) await applyZoneRuleUnderStops(em, siteId, actor, change.point, use?.open_stops ?? [], override);
}

/**
 * The rules of PUT /address on a global address (the platform host), checked before it changes. A global address
 * may stand under open stops of any site, so a moved point follows the banned-zone rule of each such stop's job
 * on that job's own site, as a site's address does. The platform operator's transaction reads every site (row-level
 * security lets the operator) and the operator acts as staff: `override` lets the move pass, each job marked and
 * audited on its own site. Every site is checked before anything is written.
 * @throws DomainError 422 ZONE_RESTRICTED naming `point` (the first site, by id, whose zone the point would be in)
 */
export async function checkGlobalAddressChange(
  em: EntityManager,
  actor: AuditActor,
  change: { id: string; point?: { lat: number; lng: number } },
  override: boolean,
): Promise<void> {
  await lockAddress(em, change.id);
  if (!change.point) return;
  const rows = await em.execute<(OpenStop & { site_id: string })[]>(
    `select s.site_id, s.job_id, s.sort_order
     from stop s join address a on a.id = s.address_id and a.site_id is null
       join job j on j.id = s.job_id and j.site_id = s.site_id
     where s.address_id = ? and s.phase not in ('completed', 'cancelled') and j.deleted_at is null
     order by s.site_id, s.job_id, s.sort_order`,
    [change.id],
  );
  const bySite = new Map<string, OpenStop[]>();
  for (const row of rows) bySite.set(row.site_id, [...(bySite.get(row.site_id) ?? []), row]);
  const staff = { ...actor, role: 'admin' as const };
  for (const [siteId, stops] of bySite) await applyZoneRuleUnderStops(em, siteId, staff, change.point, stops, override);
}

/**
 * The banned-zone rule of a point moved under a site's open stops: refused when the point is in one of the site's
 * active banned zones (customers always, staff unless `override`); an override marks each job and audits it.
 * @throws DomainError 422 ZONE_RESTRICTED naming `point`
 */
async function applyZoneRuleUnderStops(
  em: EntityManager,
  siteId: string,
  actor: AuditActor & { role: ActingRole },
  point: { lat: number; lng: number },
  stops: OpenStop[],
  override: boolean,
): Promise<void> {
  if (stops.length === 0) return;
  const place = { stopIndex: stops[0]!.sort_order, ...point };
  const overridden = await enforceBannedZonesAt(em, siteId, actor.role, place, override, 'point');
  if (overridden.length === 0) return;
  const jobIds = [...new Set(stops.map((stop) => stop.job_id))];
  // The site named in the condition rather than by the ORM's filter: on the platform host that filter is no site's.
  await em.nativeUpdate(JobSchema, { id: { $in: jobIds }, siteId }, { zoneOverride: true }, { filters: false });
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
