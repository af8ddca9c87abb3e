import { DomainError } from '../domain-error.ts';

/** A team id that names no active team of the site (the team check's answer, wherever it is read). */
export const teamNotFound = (teamId: string): DomainError => new DomainError(404, 'NOT_FOUND', `Team ${teamId} not found`, 'team_id');
