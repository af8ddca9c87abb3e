import type { EntityManager } from '@mikro-orm/postgresql';
import { booleanPointInPolygon } from '@turf/boolean-point-in-polygon';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { ZoneSchema, type Zone, type ZoneGeometry, type ZoneKind } from '../../persistence/entities/zone.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { applyPatch, auditSnapshot, containsPattern } from '../admin/patch.ts';
import { DomainError } from '../domain-error.ts';
import { assertValidGeometry } from './zone-geometry.ts';

export type ZoneInput = { name: string; kind: ZoneKind; geometry: ZoneGeometry; description?: string };
export type ZoneFilter = { q?: string; kind?: ZoneKind; is_active?: boolean; contains_lat?: number; contains_lng?: number };
type Page = { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> };

const UPDATABLE = { name: 'name', kind: 'kind', geometry: 'geometry', description: 'description', is_active: 'isActive' } as const;

/** @throws DomainError 400 INVALID_GEOMETRY naming `geometry` */
export async function createZone(em: EntityManager, actor: AuditActor, siteId: string, input: ZoneInput): Promise<Zone> {
  assertValidGeometry(input.geometry);
  const zone = em.create(ZoneSchema, {
    id: newId('zone'),
    siteId,
    name: input.name,
    kind: input.kind,
    geometry: input.geometry,
    description: input.description ?? null,
    isActive: true,
  });
  recordAudit(em, actor, { siteId, action: 'create', entityType: 'Zone', entityId: zone.id, before: null, after: auditSnapshot(zone) });
  await em.flush();
  return zone;
}

/** @throws DomainError 404 when absent or another site's */
export async function getZone(em: EntityManager, id: string): Promise<Zone> {
  const zone = await em.findOne(ZoneSchema, { id });
  if (!zone) throw DomainError.notFound('Zone', id);
  return zone;
}

/**
 * Three-state update: a value sets a field, an omitted one stays, `null` clears it (description only; the schema
 * refuses null for the others).
 * @throws DomainError 404, 400 INVALID_GEOMETRY
 */
export async function updateZone(
  em: EntityManager,
  actor: AuditActor,
  siteId: string,
  patch: { id: string; geometry?: ZoneGeometry } & Record<string, unknown>,
): Promise<Zone> {
  if (patch.geometry) assertValidGeometry(patch.geometry);
  const zone = await getZone(em, patch.id);
  const before = auditSnapshot(zone);
  applyPatch(zone, patch, UPDATABLE);
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'Zone', entityId: zone.id, before, after: auditSnapshot(zone) });
  await em.flush();
  return zone;
}

/**
 * Searches the site's zones. With a point (`contains_lat` and `contains_lng`) the matching zones are loaded and
 * tested in JS with turf, then paged in memory: fine while a site has tens of zones; past that this belongs in
 * PostGIS (`ST_Contains` on an indexed geometry column).
 */
export async function searchZones(em: EntityManager, filter: ZoneFilter, page: Page): Promise<[Zone[], number]> {
  const pattern = filter.q ? containsPattern(filter.q) : null;
  const where = {
    ...(pattern ? { $or: [{ name: { $ilike: pattern } }, { description: { $ilike: pattern } }] } : {}),
    ...(filter.kind === undefined ? {} : { kind: filter.kind }),
    ...(filter.is_active === undefined ? {} : { isActive: filter.is_active }),
  };
  if (filter.contains_lat === undefined || filter.contains_lng === undefined) return em.findAndCount(ZoneSchema, where, page);
  const point: [number, number] = [filter.contains_lng, filter.contains_lat];
  const all = await em.find(ZoneSchema, where, { orderBy: page.orderBy });
  const containing = all.filter((zone) => booleanPointInPolygon(point, zone.geometry));
  return [containing.slice(page.offset, page.offset + page.limit), containing.length];
}
