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
 * Checks that every vehicle, team and zone id given exists on the transaction's site. It runs plain SQL inside the
 * tenant transaction, so row-level security hides other sites' rows and their ids read as missing.
 * @throws DomainError 404 NOT_FOUND naming the field and the missing ids
 */
export async function assertWorkerReferences(em: EntityManager, refs: WorkerReferences): Promise<void> {
  for (const check of CHECKS) {
    const value = refs[check.field];
    const ids = [...new Set(value === null || value === undefined ? [] : Array.isArray(value) ? value : [value])];
    if (ids.length === 0) continue;
    const rows = await em.execute<{ id: string }[]>(`select id from ${check.table} where id in (${ids.map(() => '?').join(', ')})`, ids);
    const found = new Set(rows.map((r) => r.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw new DomainError(404, 'NOT_FOUND', `${check.entity} ${missing.join(', ')} not found`, check.field);
    }
  }
}
