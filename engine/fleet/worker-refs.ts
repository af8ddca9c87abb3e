import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../domain-error.ts';

/** The fleet records a worker points at, by id: checked here rather than by foreign keys (see migration 0007). */
export type WorkerReferences = { default_vehicle_id?: string | null; team_ids?: string[] | null; zone_ids?: string[] | null };

// Table names are fixed here, never taken from input.
const CHECKS = [
  { field: 'default_vehicle_id', table: 'vehicle', entity: 'Vehicle' },
  { field: 'team_ids', table: 'team', entity: 'Team' },
  { field: 'zone_ids', table: 'zone', entity: 'Zone' },
] as const;

/**
 * Checks that every vehicle, team and zone id given exists on the transaction's site, in one statement. It runs plain
 * SQL inside the tenant transaction and names the site too (row-level security is not enforced on PGlite), so other
 * sites' ids read as missing.
 * @throws DomainError 404 NOT_FOUND naming the first field (vehicle, team, zone) with missing ids, and those ids
 */
export async function assertWorkerReferences(em: EntityManager, siteId: string, refs: WorkerReferences): Promise<void> {
  const asked = CHECKS.map((check) => {
    const value = refs[check.field];
    return { check, ids: [...new Set(value === null || value === undefined ? [] : Array.isArray(value) ? value : [value])] };
  }).filter((entry) => entry.ids.length > 0);
  if (asked.length === 0) return;
  const sql = asked.map(({ check, ids }) => `select '${check.field}' as field, id from ${check.table} where site_id = ? and id in (${ids.map(() => '?').join(', ')})`).join(' union all ');
  const rows = await em.execute<{ field: string; id: string }[]>(sql, asked.flatMap((entry) => [siteId, ...entry.ids]));
  for (const { check, ids } of asked) {
    const found = new Set(rows.filter((r) => r.field === check.field).map((r) => r.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw new DomainError(404, 'NOT_FOUND', `${check.entity} ${missing.join(', ')} not found`, check.field);
    }
  }
}
