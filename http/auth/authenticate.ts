import type { MikroORM } from '@mikro-orm/postgresql';
import { AccessTokenSchema } from '../../persistence/entities/access-token.entity.ts';
import { ApplicationSchema } from '../../persistence/entities/application.entity.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { UserSchema } from '../../persistence/entities/user.entity.ts';
import { hash } from 'node:crypto';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { ApiError } from '../errors.ts';
import type { Role } from '../permissions.ts';
import type { CredentialCache } from './credential-cache.ts';
import type { Principal } from './principal.ts';

export type Credential = { kind: 'api_key' | 'session'; token: string; hash: string };

/**
 * Reads the one credential header of a request.
 * @returns null when neither header is present
 * @throws ApiError 400 AMBIGUOUS_CREDENTIALS when both are
 */
export function readCredential(headers: Headers): Credential | null {
  const apiKey = headers.get('x-api-key');
  const accessToken = headers.get('x-access-token');
  if (apiKey && accessToken) {
    throw ApiError.badRequest('AMBIGUOUS_CREDENTIALS', 'Send exactly one of x-api-key or x-access-token, not both');
  }
  const token = apiKey ?? accessToken;
  if (!token) return null;
  return { kind: apiKey ? 'api_key' : 'session', token, hash: credentialHash(token) };
}

/**
 * SHA-256 of a token in hex, the same digest as `hashToken` (persistence/secrets.ts) that the database stores: the
 * one-shot `crypto.hash` costs a third of `createHash().update().digest()`, which matters once per request.
 */
export function credentialHash(token: string): string {
  return hash('sha256', token, 'hex');
}

/**
 * Resolves a credential to a principal on the request's host. A credential issued for another site (or for the
 * platform when on a site host) is simply not found in this host's scope: 401, never a hint that it exists.
 * A cached credential is answered synchronously (see CredentialCache).
 * @throws ApiError 401 INVALID_CREDENTIALS or TOKEN_EXPIRED
 */
export function authenticate(
  deps: { orm: MikroORM; credentials: CredentialCache },
  credential: Credential,
  siteId: string | null,
  now: number,
): Principal | Promise<Principal> {
  const cached = deps.credentials.cached(credential.hash);
  if (cached) return usableOnHost(cached, credential, siteId, now);
  return deps.credentials
    .resolve(credential.hash, siteId, () => loadPrincipal(deps.orm, credential, siteId, now))
    .then((loaded) => usableOnHost(loaded, credential, siteId, now));
}

function usableOnHost(principal: Principal, credential: Credential, siteId: string | null, now: number): Principal {
  if (principal.siteId !== siteId) throw invalid(credential);
  if (principal.expiresAt !== null && principal.expiresAt <= now) {
    throw ApiError.unauthorized('TOKEN_EXPIRED', 'The access token has expired; refresh it with POST /auth/refresh');
  }
  return principal;
}

async function loadPrincipal(orm: MikroORM, credential: Credential, siteId: string | null, now: number): Promise<Principal> {
  const principal = await inTenantScope(orm, { siteId }, async (em) => {
    if (credential.kind === 'api_key') {
      if (siteId === null) return null;
      const app = await em.findOne(ApplicationSchema, { keyHash: credential.hash, isActive: true });
      if (!app) return null;
      const user = await em.findOne(UserSchema, { id: app.serviceUserId, isActive: true });
      if (!user) return null;
      return {
        kind: 'api_key',
        siteId,
        userId: user.id,
        role: app.role as Role,
        profileId: null,
        applicationId: app.id,
        accessTokenId: null,
        sessionId: null,
        expiresAt: null,
      } satisfies Principal;
    }
    const token = await em.findOne(AccessTokenSchema, { tokenHash: credential.hash, isActive: true, siteId });
    if (!token) return null;
    if (token.expiresAt.getTime() <= now) {
      throw ApiError.unauthorized('TOKEN_EXPIRED', 'The access token has expired; refresh it with POST /auth/refresh');
    }
    const user = await em.findOne(UserSchema, { id: token.userId, isActive: true });
    if (!user) return null;
    const role = await roleOf(em, token.profileId ?? null, user.isPlatformOperator);
    if (!role) return null;
    return {
      kind: 'session',
      siteId,
      userId: user.id,
      role,
      profileId: token.profileId ?? null,
      applicationId: token.applicationId ?? null,
      accessTokenId: token.id,
      sessionId: token.sessionId,
      expiresAt: token.expiresAt.getTime(),
    } satisfies Principal;
  });
  if (!principal) throw invalid(credential);
  return principal;
}

async function roleOf(
  em: Parameters<Parameters<typeof inTenantScope>[2]>[0],
  profileId: string | null,
  isPlatformOperator: boolean,
): Promise<Role | null> {
  if (profileId === null) return isPlatformOperator ? 'platform' : null;
  const profile = await em.findOne(UserProfileSchema, { id: profileId, isActive: true });
  return profile ? (profile.role as Role) : null;
}

function invalid(credential: Credential): ApiError {
  return ApiError.unauthorized(
    'INVALID_CREDENTIALS',
    credential.kind === 'api_key' ? 'The API key is not valid for this site' : 'The access token is not valid for this site',
  );
}
