import type { EntityManager } from '@mikro-orm/postgresql';
import { booleanPointInPolygon } from '@turf/boolean-point-in-polygon';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import type { Address } from '../../persistence/entities/address.entity.ts';
import type { ZoneGeometry } from '../../persistence/entities/zone.entity.ts';
import { DomainError } from '../domain-error.ts';
import type { ActingRole } from '../../machines/entity-machine.ts';
import { isStaff, type StopInput } from '../jobs/job-input.ts';

export type StopPoint = { index: number; lat: number; lng: number };
export type BannedZoneHit = { stopIndex: number; zoneId: string; zoneName: string };

/** A banned zone as the hit test needs it. */
export type BannedZone = { id: string; name: string; geometry: ZoneGeometry };

/** The site's active banned zones (`?`: the site) as a JSON array of {@link BannedZone}, ordered by id: what every check reads. */
export const BANNED_ZONES_JSON = `(select coalesce(json_agg(json_build_object('id', z.id, 'name', z.name, 'geometry', z.geometry) order by z.id), '[]'::json)
  from zone z where z.site_id = ? and z.kind = 'banned' and z.is_active)`;

/** Which of the points lie in one of `zones` (ordered by id; a point on the border counts as inside). */
export function bannedZoneHitsIn(zones: BannedZone[], points: StopPoint[]): BannedZoneHit[] {
  const hits: BannedZoneHit[] = [];
  for (const point of points) {
    for (const zone of zones) {
      if (booleanPointInPolygon([point.lng, point.lat], zone.geometry)) hits.push({ stopIndex: point.index, zoneId: zone.id, zoneName: zone.name });
    }
  }
  return hits;
}

/**
 * The banned-zone rule of job creation: a stop in one of `zones` (the site's active banned zones, ordered by id)
 * refuses the job, unless staff ask to override it. Customers can never override, flag or not. Stops must have been
 * validated (address found, or a point); `addresses` holds the ones they name by `address_id`.
 * @returns the hits overridden (empty when no stop is in a banned zone), for the caller to audit
 * @throws DomainError 422 ZONE_RESTRICTED naming the first stop hit (`stops.<n>`), every hit in `details.hits`
 */
export function enforceBannedZones(zones: BannedZone[], role: ActingRole, stops: StopInput[], addresses: Map<string, Address>, override: boolean): BannedZoneHit[] {
  const hits = zones.length === 0 ? [] : bannedZoneHitsIn(zones, stopPoints(stops, addresses));
  if (hits.length === 0 || (override && isStaff(role))) return hits;
  const first = hits[0]!;
  throw zoneRestricted(hits, `Stop ${first.stopIndex} is inside the banned zone ${first.zoneName} (${first.zoneId})`, `stops.${first.stopIndex}`);
}

function zoneRestricted(hits: BannedZoneHit[], message: string, field: string): DomainError {
  return new DomainError(422, 'ZONE_RESTRICTED', message, field, {
    hits: hits.map((h) => ({ stop_index: h.stopIndex, zone_id: h.zoneId, zone_name: h.zoneName })),
  });
}

/**
 * The banned-zone rule of a stop moved to another place (a new address on a job or stop update, an address's point
 * changed under an open job's stop): refused when the point lies in one of the site's active banned zones, for
 * customers always, for staff unless they pass `override`. The caller marks the job overridden and audits the hits.
 * @returns the hits overridden (empty when the point is in no banned zone)
 * @throws DomainError 422 ZONE_RESTRICTED naming `field`, every hit in `details.hits`
 */
export async function enforceBannedZonesAt(
  em: EntityManager,
  siteId: string,
  role: ActingRole,
  place: { stopIndex: number; lat: number; lng: number },
  override: boolean,
  field: string,
): Promise<BannedZoneHit[]> {
  const [row] = await em.execute<{ zones: BannedZone[] }[]>(`select ${BANNED_ZONES_JSON} as zones`, [siteId]);
  const hits = bannedZoneHitsIn(row?.zones ?? [], [{ index: place.stopIndex, lat: place.lat, lng: place.lng }]);
  if (hits.length === 0 || (override && isStaff(role))) return hits;
  throw zoneRestricted(hits, `Stop ${place.stopIndex} would be inside the banned zone ${hits[0]!.zoneName} (${hits[0]!.zoneId})`, field);
}

/**
 * Audits a staff override as its own `zone_override` record on the job (nothing when no zone was hit), so overrides
 * can be searched by action and each names the zones it went past; the job's create record stays the plain job.
 */
export function recordZoneOverride(em: EntityManager, actor: AuditActor, siteId: string, jobId: string, hits: BannedZoneHit[]): void {
  if (hits.length === 0) return;
  const rows = hits.map((h) => ({ stop_index: h.stopIndex, zone_id: h.zoneId, zone_name: h.zoneName }));
  recordAudit(em, actor, { siteId, action: 'zone_override', entityType: 'Job', entityId: jobId, before: null, after: { zone_ids: [...new Set(hits.map((h) => h.zoneId))], hits: rows } });
}

/** Each stop's point: the inline one, else its address's (loaded by stop validation). */
function stopPoints(stops: StopInput[], addresses: Map<string, Address>): StopPoint[] {
  const points: StopPoint[] = [];
  for (const [index, stop] of stops.entries()) {
    const address = stop.address_id ? addresses.get(stop.address_id) : undefined;
    const point = address ? { lat: Number(address.lat), lng: Number(address.lng) } : stop.point;
    if (point) points.push({ index, lat: point.lat, lng: point.lng });
  }
  return points;
}
