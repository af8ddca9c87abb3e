import type { OperationalStatus } from '../../persistence/entities/worker.entity.ts';
import { containsPattern } from '../admin/patch.ts';
import { parseCustomFieldFilter } from '../customfields/custom-field-values.ts';
import { readPage, type PageRequest } from '../runtime/paged-read.ts';
import type { ReadRow, TenantRead } from '../runtime/tenant-read.ts';
import type { WorkerFields } from './worker.service.ts';

export type WorkerFilter = {
  q?: string;
  team_id?: string;
  zone_id?: string;
  skill?: string;
  operational_status?: OperationalStatus;
  has_vehicle?: boolean;
  /** A JSON object of custom field values that must all match (see parseCustomFieldFilter). */
  custom_fields?: string;
};

const SORT_COLUMNS: Record<string, string> = { createdAt: 'created_at', operationalStatus: 'operational_status', id: 'user_id' };

/** The worker's user as its answer shows it, read with the page's rows only. */
const USER_COLUMN = `, (select json_build_object('id', u.id, 'email', u.email, 'first_name', u.first_name, 'last_name', u.last_name,
    'display_name', u.display_name, 'phone', u.phone) from app_user u where u.id = w.user_id) as worker_user`;

type UserColumn = { id: string; email: string; first_name: string | null; last_name: string | null; display_name: string | null; phone: string | null };

/**
 * The site's workers matching every filter given, with their users, and how many match in all: one statement in one
 * round trip (`readPage`). `q` matches the user's names, email and phone; team, zone and skill match one element of
 * the worker's lists (JSON containment, so `van` does not match `vans`).
 * @throws DomainError 400 INVALID_CUSTOM_FIELD_FILTER
 */
export async function searchWorkers(read: TenantRead, siteId: string, filter: WorkerFilter, page: PageRequest): Promise<[WorkerFields[], number]> {
  const where: string[] = ['w.site_id = ?'];
  const params: unknown[] = [siteId];
  const add = (sql: string, ...values: unknown[]) => {
    where.push(sql);
    params.push(...values);
  };
  if (filter.q) {
    const pattern = containsPattern(filter.q);
    const matches = ['email', 'first_name', 'last_name', 'display_name', 'phone'].map((column) => `u.${column} ilike ?`);
    add(`w.user_id in (select u.id from app_user u where ${matches.join(' or ')})`, ...matches.map(() => pattern));
  }
  if (filter.team_id) add('w.team_ids @> ?::jsonb', JSON.stringify([filter.team_id]));
  if (filter.zone_id) add('w.zone_ids @> ?::jsonb', JSON.stringify([filter.zone_id]));
  if (filter.skill) add('w.skills @> ?::jsonb', JSON.stringify([filter.skill]));
  const customFields = parseCustomFieldFilter(filter.custom_fields);
  if (customFields) add('w.custom_fields @> ?::jsonb', JSON.stringify(customFields));
  if (filter.operational_status) add('w.operational_status = ?', filter.operational_status);
  if (filter.has_vehicle !== undefined) where.push(`w.default_vehicle_id is ${filter.has_vehicle ? 'not null' : 'null'}`);
  const order = Object.entries(page.orderBy).map(([property, direction]) => `w.${SORT_COLUMNS[property] ?? 'user_id'} ${direction}`).join(', ');
  const [rows, total] = await readPage(read, siteId, { table: 'worker', alias: 'w', key: 'user_id', columns: USER_COLUMN, where, params, order }, page);
  // A worker whose user this scope cannot see is left out of the page (it still counts, as it did through the ORM).
  return [rows.flatMap((row) => (row.worker_user ? [workerOfRow(row)] : [])), total];
}

/** A row of the search as the fields a worker's answer shows (timestamps come back as text). */
function workerOfRow(row: ReadRow): WorkerFields {
  const user = row.worker_user as UserColumn;
  return {
    user: { id: user.id, email: user.email, firstName: user.first_name, lastName: user.last_name, displayName: user.display_name, phone: user.phone },
    worker: {
      siteId: String(row.site_id),
      defaultVehicleId: row.default_vehicle_id as string | null,
      teamIds: row.team_ids as string[],
      zoneIds: row.zone_ids as string[],
      skills: row.skills as string[],
      operationalStatus: row.operational_status as OperationalStatus,
      maxLoad: row.max_load as number | null,
      notes: row.notes as string | null,
      customFields: (row.custom_fields ?? {}) as WorkerFields['worker']['customFields'],
      createdAt: new Date(String(row.created_at)),
      updatedAt: new Date(String(row.updated_at)),
    },
  };
}
