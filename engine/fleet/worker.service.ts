import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { UserSchema, type User } from '../../persistence/entities/user.entity.ts';
import { WorkerSchema, type OperationalStatus, type Worker } from '../../persistence/entities/worker.entity.ts';
import { applyPatch, auditSnapshot } from '../admin/patch.ts';
import { createUser } from '../admin/user.service.ts';
import { loadDefinitions, resolveCustomFields, type CustomFieldInput } from '../customfields/custom-field-values.ts';
import { DomainError } from '../domain-error.ts';
import { assertWorkerReferences } from './worker-refs.ts';

/** A worker as the API shows it: the driver's user account and their dispatch details on the site. */
export type WorkerView = { user: User; worker: Worker };

/** What a worker's answer shows of a {@link WorkerView}: also what a search reads for each worker of its page. */
export type WorkerFields = {
  user: Pick<User, 'id' | 'email' | 'firstName' | 'lastName' | 'displayName' | 'phone'>;
  worker: Pick<Worker, 'siteId' | 'defaultVehicleId' | 'teamIds' | 'zoneIds' | 'skills' | 'operationalStatus' | 'maxLoad' | 'notes' | 'customFields' | 'createdAt' | 'updatedAt'>;
};

export type WorkerDetailsInput = {
  default_vehicle_id?: string;
  team_ids?: string[];
  zone_ids?: string[];
  skills?: string[];
  operational_status?: OperationalStatus;
  max_load?: number;
  notes?: string;
  custom_fields?: CustomFieldInput;
};

/** Either an existing driver of the site (`user_id`) or a new person to create as one. */
export type CreateWorkerInput = WorkerDetailsInput & {
  user_id?: string;
  email?: string;
  first_name?: string;
  last_name?: string;
  phone?: string;
  password?: string;
};

const UPDATABLE = {
  default_vehicle_id: 'defaultVehicleId',
  team_ids: 'teamIds',
  zone_ids: 'zoneIds',
  skills: 'skills',
  operational_status: 'operationalStatus',
  max_load: 'maxLoad',
  notes: 'notes',
} as const;

/**
 * Makes a driver a worker of the site. With `user_id`, the user must hold an active driver profile here; with
 * inline user fields, the user and their driver profile are created through the user service (which audits them).
 * @throws DomainError 400 USER_REQUIRED / USER_AMBIGUOUS (field `user_id`), 404 NOT_FOUND (field `user_id`, or the
 *   field of an unknown vehicle, team or zone), 409 WORKER_EXISTS, 409 EMAIL_TAKEN
 */
export async function createWorker(em: EntityManager, actor: AuditActor, siteId: string, input: CreateWorkerInput): Promise<WorkerView> {
  const inline = (['email', 'first_name', 'last_name', 'phone', 'password'] as const).filter((field) => input[field] !== undefined);
  if (input.user_id && inline.length > 0) {
    throw DomainError.invalid('USER_AMBIGUOUS', `give user_id or the new user's fields (${inline.join(', ')}), not both`, 'user_id');
  }
  if (!input.user_id && !input.email) throw DomainError.invalid('USER_REQUIRED', 'user_id or email is required', 'user_id');
  await assertWorkerReferences(em, siteId, input);
  const customFields = resolveCustomFields(await loadDefinitions(em, 'worker'), null, input.custom_fields);
  const user = input.user_id ? await activeDriver(em, siteId, input.user_id) : await newDriver(em, actor, siteId, input);
  // A user created just now is nobody's worker yet.
  if (input.user_id && (await em.count(WorkerSchema, { userId: user.id }))) {
    throw new DomainError(409, 'WORKER_EXISTS', `User ${user.id} is already a worker of this site`, 'user_id');
  }
  const worker = em.create(WorkerSchema, {
    siteId,
    userId: user.id,
    defaultVehicleId: input.default_vehicle_id ?? null,
    teamIds: input.team_ids ?? [],
    zoneIds: input.zone_ids ?? [],
    skills: input.skills ?? [],
    operationalStatus: input.operational_status ?? 'active',
    maxLoad: input.max_load ?? null,
    notes: input.notes ?? null,
    customFields,
  });
  recordAudit(em, actor, { siteId, action: 'create', entityType: 'Worker', entityId: user.id, before: null, after: auditSnapshot(worker) });
  await em.flush();
  return { user, worker };
}

/**
 * @param lock read the worker row `for update` (in a transaction), for a change computed from what it holds
 * @throws DomainError 404 when the user is not a worker of this site
 */
export async function getWorker(em: EntityManager, userId: string, lock = false): Promise<WorkerView> {
  const worker = await em.findOne(WorkerSchema, { userId }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : {});
  const user = worker ? await em.findOne(UserSchema, { id: userId }) : null;
  if (!worker || !user) throw DomainError.notFound('Worker', userId);
  return { user, worker };
}

/**
 * Three-state update of the dispatch details: a value sets a field, an omitted one stays, `null` clears it (lists
 * cleared by null become empty). The user account is changed through /user, not here.
 * @throws DomainError 404 (the worker, or naming the field of an unknown vehicle, team or zone)
 */
export async function updateWorker(
  em: EntityManager,
  actor: AuditActor,
  siteId: string,
  patch: { id: string; default_vehicle_id?: string | null; team_ids?: string[] | null; zone_ids?: string[] | null; custom_fields?: CustomFieldInput } & Record<string, unknown>,
): Promise<WorkerView> {
  // Locked before it is read: the custom fields merge the change into the stored values, and a concurrent update of
  // other keys must not be merged into values it is about to replace.
  const view = await getWorker(em, patch.id, true);
  await assertWorkerReferences(em, siteId, patch);
  const customFields = patch.custom_fields === undefined ? undefined : resolveCustomFields(await loadDefinitions(em, 'worker'), view.worker.customFields ?? {}, patch.custom_fields);
  const before = auditSnapshot(view.worker);
  applyPatch(view.worker, patch, UPDATABLE);
  if (customFields) view.worker.customFields = customFields;
  for (const list of ['teamIds', 'zoneIds', 'skills'] as const) view.worker[list] ??= [];
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'Worker', entityId: patch.id, before, after: auditSnapshot(view.worker) });
  await em.flush();
  return view;
}

async function activeDriver(em: EntityManager, siteId: string, userId: string): Promise<User> {
  const user = await em.findOne(UserSchema, { id: userId, isActive: true, isServiceAccount: false });
  const profile = user ? await em.findOne(UserProfileSchema, { siteId, userId, role: 'driver', isActive: true }) : null;
  if (!user || !profile) throw new DomainError(404, 'NOT_FOUND', `Driver ${userId} not found on this site`, 'user_id');
  return user;
}

async function newDriver(em: EntityManager, actor: AuditActor, siteId: string, input: CreateWorkerInput): Promise<User> {
  const view = await createUser(em, actor, { siteId }, {
    email: input.email ?? '',
    password: input.password,
    first_name: input.first_name,
    last_name: input.last_name,
    phone: input.phone,
    role: 'driver',
  });
  return view.user;
}
