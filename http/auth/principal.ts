import type { Role } from '../permissions.ts';

/** Who is calling: resolved from exactly one credential header, scoped to one site (or the platform). */
export type Principal = {
  kind: 'session' | 'api_key';
  /** null: a platform operator's session on the platform host. */
  siteId: string | null;
  userId: string;
  role: Role;
  profileId: string | null;
  applicationId: string | null;
  accessTokenId: string | null;
  /** The refresh-token family of a user session. */
  sessionId: string | null;
  /** Epoch ms after which the credential is refused (access tokens). */
  expiresAt: number | null;
};

/** The rate-limit bucket: one per API key, one per user session (so refreshing does not reset the quota). */
export function rateLimitKey(principal: Principal): string {
  return principal.applicationId && principal.kind === 'api_key'
    ? `key:${principal.applicationId}`
    : `session:${principal.sessionId ?? principal.accessTokenId}`;
}
