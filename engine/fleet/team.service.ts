import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { TeamSchema, type Team } from '../../persistence/entities/team.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { applyPatch, auditSnapshot, containsPattern } from '../admin/patch.ts';
import { DomainError } from '../domain-error.ts';

export type TeamInput = { name: string; description?: string };

const UPDATABLE = { name: 'name', description: 'description', is_active: 'isActive' } as const;

export async function createTeam(em: EntityManager, actor: AuditActor, siteId: string, input: TeamInput): Promise<Team> {
  const team = em.create(TeamSchema, { id: newId('team'), siteId, name: input.name, description: input.description ?? null, isActive: true });
  recordAudit(em, actor, { siteId, action: 'create', entityType: 'Team', entityId: team.id, before: null, after: auditSnapshot(team) });
  await em.flush();
  return team;
}

/** @throws DomainError 404 when absent or another site's */
export async function getTeam(em: EntityManager, id: string): Promise<Team> {
  const team = await em.findOne(TeamSchema, { id });
  if (!team) throw DomainError.notFound('Team', id);
  return team;
}

/**
 * Three-state update: a value sets a field, an omitted one stays, `null` clears it.
 * @throws DomainError 404
 */
export async function updateTeam(em: EntityManager, actor: AuditActor, siteId: string, patch: { id: string } & Record<string, unknown>): Promise<Team> {
  const team = await getTeam(em, patch.id);
  const before = auditSnapshot(team);
  applyPatch(team, patch, UPDATABLE);
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'Team', entityId: team.id, before, after: auditSnapshot(team) });
  await em.flush();
  return team;
}

export async function searchTeams(
  em: EntityManager,
  filter: { q?: string; is_active?: boolean },
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[Team[], number]> {
  const pattern = filter.q ? containsPattern(filter.q) : null;
  return em.findAndCount(
    TeamSchema,
    {
      ...(pattern ? { $or: [{ name: { $ilike: pattern } }, { description: { $ilike: pattern } }] } : {}),
      ...(filter.is_active === undefined ? {} : { isActive: filter.is_active }),
    },
    page,
  );
}
