import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { ApplicationSchema, type Application } from '../../persistence/entities/application.entity.ts';
import { SiteSchema } from '../../persistence/entities/site.entity.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { UserSchema } from '../../persistence/entities/user.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { generateToken, hashToken } from '../../persistence/secrets.ts';
import { DomainError } from '../domain-error.ts';
import { applyPatch, auditSnapshot, containsPattern } from './patch.ts';

/** Characters of the key kept as its visible preview (`dsk_` plus 6), enough to tell keys apart. */
const PREVIEW_LENGTH = 10;

export type ApplicationInput = { name: string; role: string; description?: string; package_name?: string };

const UPDATABLE = { name: 'name', description: 'description', package_name: 'packageName', is_active: 'isActive' } as const;

/**
 * Creates an API key for a site with its own service account (a user with a profile of the key's role), so every
 * change the key makes is attributed in the audit log.
 * @returns the application and the plain key, which is stored only as a SHA-256 and never shown again
 */
export async function createApplication(
  em: EntityManager,
  actor: AuditActor,
  siteId: string,
  input: ApplicationInput,
): Promise<{ application: Application; apiKey: string }> {
  const site = await em.findOneOrFail(SiteSchema, { id: siteId });
  const apiKey = generateToken('apiKey');
  const id = newId('application');
  const serviceUser = em.create(UserSchema, {
    id: newId('user'),
    email: `${id.toLowerCase()}@service-account.invalid`,
    passwordHash: null,
    displayName: `${input.name} (API key)`,
    organizationId: site.organizationId,
    isPlatformOperator: false,
    isServiceAccount: true,
    isActive: true,
  });
  em.create(UserProfileSchema, { id: newId('profile'), siteId, userId: serviceUser.id, role: input.role, isActive: true });
  const application = em.create(ApplicationSchema, {
    id,
    siteId,
    organizationId: site.organizationId,
    name: input.name,
    description: input.description ?? null,
    role: input.role,
    keyPrefix: apiKey.slice(0, PREVIEW_LENGTH),
    keyHash: hashToken(apiKey),
    serviceUserId: serviceUser.id,
    packageName: input.package_name ?? null,
    isActive: true,
  });
  recordAudit(em, actor, { siteId, action: 'create', entityType: 'Application', entityId: id, before: null, after: auditSnapshot(application) });
  await em.flush();
  return { application, apiKey };
}

export async function getApplication(em: EntityManager, id: string): Promise<Application> {
  const application = await em.findOne(ApplicationSchema, { id });
  if (!application) throw DomainError.notFound('Application', id);
  return application;
}

/** A role change moves the service account's profile too; `is_active: false` revokes the key at once. */
export async function updateApplication(
  em: EntityManager,
  actor: AuditActor,
  siteId: string,
  patch: { id: string; role?: string } & Record<string, unknown>,
): Promise<Application> {
  const application = await getApplication(em, patch.id);
  const before = auditSnapshot(application);
  applyPatch(application, patch, UPDATABLE);
  if (patch.role !== undefined) {
    application.role = patch.role;
    const profile = await em.findOne(UserProfileSchema, { userId: application.serviceUserId });
    if (profile) profile.role = patch.role;
  }
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'Application', entityId: application.id, before, after: auditSnapshot(application) });
  await em.flush();
  return application;
}

export async function searchApplications(
  em: EntityManager,
  filter: { q?: string; role?: string; is_active?: boolean },
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[Application[], number]> {
  return em.findAndCount(
    ApplicationSchema,
    {
      ...(filter.q ? { name: { $ilike: containsPattern(filter.q) } } : {}),
      ...(filter.role ? { role: filter.role } : {}),
      ...(filter.is_active === undefined ? {} : { isActive: filter.is_active }),
    },
    page,
  );
}
