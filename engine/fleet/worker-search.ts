import type { EntityManager } from '@mikro-orm/postgresql';
import { UserSchema } from '../../persistence/entities/user.entity.ts';
import { WorkerSchema, type OperationalStatus } from '../../persistence/entities/worker.entity.ts';
import { containsPattern } from '../admin/patch.ts';
import { parseCustomFieldFilter } from '../customfields/custom-field-values.ts';
import type { WorkerView } from './worker.service.ts';

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

/**
 * The site's workers matching every filter given: `q` matches the user's names, email and phone; team, zone and
 * skill match one element of the worker's lists (JSON containment, so `van` does not match `vans`).
 * @returns one page of workers with their users, and the total count
 */
export async function searchWorkers(
  em: EntityManager,
  siteId: string,
  filter: WorkerFilter,
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[WorkerView[], number]> {
  // A query builder rather than find(): JSON containment has no operator in the ORM's filter language.
  const qb = em.createQueryBuilder(WorkerSchema, 'w').where({ siteId });
  if (filter.q) {
    const pattern = containsPattern(filter.q);
    const users = em
      .createQueryBuilder(UserSchema, 'u')
      .select('u.id')
      .where({ $or: ['email', 'firstName', 'lastName', 'displayName', 'phone'].map((field) => ({ [field]: { $ilike: pattern } })) });
    qb.andWhere({ userId: { $in: users.getKnexQuery() } });
  }
  if (filter.team_id) qb.andWhere('w.team_ids @> ?::jsonb', [JSON.stringify([filter.team_id])]);
  if (filter.zone_id) qb.andWhere('w.zone_ids @> ?::jsonb', [JSON.stringify([filter.zone_id])]);
  if (filter.skill) qb.andWhere('w.skills @> ?::jsonb', [JSON.stringify([filter.skill])]);
  const customFields = parseCustomFieldFilter(filter.custom_fields);
  if (customFields) qb.andWhere('w.custom_fields @> ?::jsonb', [JSON.stringify(customFields)]);
  if (filter.operational_status) qb.andWhere({ operationalStatus: filter.operational_status });
  if (filter.has_vehicle !== undefined) qb.andWhere({ defaultVehicleId: filter.has_vehicle ? { $ne: null } : null });
  const [workers, total] = await qb.orderBy(page.orderBy).limit(page.limit).offset(page.offset).getResultAndCount();
  const users = workers.length ? await em.find(UserSchema, { id: { $in: workers.map((w) => w.userId) } }) : [];
  const views = workers.flatMap((worker) => {
    const user = users.find((u) => u.id === worker.userId);
    return user ? [{ user, worker }] : [];
  });
  return [views, total];
}
