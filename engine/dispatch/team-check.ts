import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import { sendWithNext } from '../runtime/deferred-writes.ts';

/** The SQLSTATE `dispatch_team_holds` raises (migration 0034): the team is not an active team of the site. */
const TEAM_NOT_FOUND = 'DT404';

/**
 * Checks that `teamId` is an active team of the site with the command's next statement (a team dispatch's head read)
 * rather than in a round trip of its own: the check raises in the database when it fails, and
 * {@link answerMissingTeam} turns that into the 404 the caller answers.
 */
export function checkTeamWithNext(scope: CommandScope, teamId: string): Promise<void> {
  return sendWithNext(scope.em, 'select dispatch_team_holds(?, ?)', [teamId, scope.siteId]);
}

/** `error` as the 404 naming `team_id` when it is `dispatch_team_holds`' failure; any other error as it is. */
export function answerMissingTeam(error: unknown, teamId: string): unknown {
  if ((error as { code?: unknown } | null)?.code !== TEAM_NOT_FOUND) return error;
  return new DomainError(404, 'NOT_FOUND', `Team ${teamId} not found`, 'team_id');
}
