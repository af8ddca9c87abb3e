import { Type } from 'typebox';
import { loadAuthContext } from '../../engine/auth/auth-context.ts';
import { confirmPasswordReset } from '../../engine/auth/password-reset.ts';
import { enqueuePasswordReset } from '../../engine/auth/password-reset-queue.ts';
import { rotateRefreshToken } from '../../engine/auth/refresh.ts';
import { completeSiteSelection, revokeSession, signIn, type AuthSettings, type IssuedSession } from '../../engine/auth/session.service.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../app/services.ts';
import { ApiError } from '../errors.ts';
import { defineOperation } from '../operation.ts';
import { serializeOnce } from '../run-operation.ts';
import {
  AuthContextResponse,
  PreAuthResponse,
  SessionResponse,
  SignInBody,
  toAuthContextResponse,
  toPreAuthResponse,
  toSessionResponse,
} from '../schemas/auth.schema.ts';
import { DataResponse, Id } from '../schemas/common.schema.ts';

const Accepted = DataResponse(Type.Object({ status: Type.String(), message: Type.String() }, { additionalProperties: false }));

function settingsOf(services: Services): AuthSettings {
  const { config, clock } = services;
  return { clock, accessTtlSeconds: config.accessTokenTtlSeconds, refreshTtlSeconds: config.refreshTokenTtlSeconds };
}

async function sessionBody(em: EntityManager, services: Services, session: IssuedSession) {
  const context = await loadAuthContext(em, {
    siteId: session.siteId,
    userId: session.user.id,
    profileId: session.profile?.id ?? null,
    applicationId: null,
    accessTokenId: session.accessTokenId,
  });
  return toSessionResponse(session, context, services.clock.now());
}

export const authOperations = [
  defineOperation({
    id: 'auth.signin',
    method: 'POST',
    path: '/auth/signin',
    summary: 'Sign in: a session on a site host, or a pre-authentication to finish with POST /auth/site; too many failures for an account answer 429',
    tag: 'Auth',
    access: 'public',
    host: 'any',
    body: SignInBody,
    response: DataResponse(Type.Union([SessionResponse, PreAuthResponse])),
    handler: async ({ body, site, services, transaction }) => ({
      data: await services.signInThrottle.guard(site?.id ?? null, body.email, () =>
        transaction(async (em) => {
          const result = await signIn(em, settingsOf(services), site?.id ?? null, body.email, body.password);
          if (result.kind === 'pre_auth') return toPreAuthResponse(result.token, result.expiresAt, result.user, result.choices);
          return sessionBody(em, services, result.session);
        }),
      ),
    }),
  }),
  defineOperation({
    id: 'auth.site',
    method: 'POST',
    path: '/auth/site',
    summary: 'Finish a pre-authentication by choosing one of the listed profiles (a site and role)',
    tag: 'Auth',
    access: 'public',
    host: 'any',
    body: Type.Object({ pre_auth_token: Type.String({ minLength: 1, maxLength: 200 }), profile_id: Id }, { additionalProperties: false }),
    response: DataResponse(SessionResponse),
    handler: async ({ body, site, services, transaction }) => ({
      data: await transaction(async (em) =>
        sessionBody(em, services, await completeSiteSelection(em, settingsOf(services), site?.id ?? null, body.pre_auth_token, body.profile_id)),
      ),
    }),
  }),
  defineOperation({
    id: 'auth.refresh',
    method: 'POST',
    path: '/auth/refresh',
    summary: 'Rotate a refresh token for a new token pair; a reused refresh token revokes its whole session',
    tag: 'Auth',
    access: 'public',
    host: 'any',
    body: Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
    response: DataResponse(SessionResponse),
    handler: async ({ body, site, services, transaction }) => {
      const outcome = await transaction(async (em) => {
        const result = await rotateRefreshToken(em, settingsOf(services), site?.id ?? null, body.refresh_token);
        return result.kind === 'rotated' ? { kind: 'rotated' as const, body: await sessionBody(em, services, result.session) } : result;
      });
      if (outcome.kind === 'rotated') return { data: outcome.body };
      if (outcome.kind === 'reused') {
        await services.credentials.invalidate();
        throw ApiError.unauthorized('REFRESH_TOKEN_REUSED', 'This refresh token was already used: the session is revoked, sign in again');
      }
      throw ApiError.unauthorized('INVALID_REFRESH_TOKEN', 'The refresh token is unknown, expired or revoked');
    },
  }),
  defineOperation({
    id: 'auth.signout',
    method: 'POST',
    path: '/auth/signout',
    summary: 'End the current session (its access and refresh tokens)',
    tag: 'Auth',
    access: 'authenticated',
    host: 'any',
    response: DataResponse(Type.Object({ signed_out: Type.Literal(true) }, { additionalProperties: false })),
    handler: async ({ principal, services, transaction }) => {
      const sessionId = principal?.sessionId;
      if (!sessionId) throw ApiError.badRequest('SESSION_REQUIRED', 'Sign-out ends a user session; revoke an API key with PUT /application');
      await transaction((em) => revokeSession(em, sessionId));
      await services.credentials.invalidate();
      return { data: { signed_out: true as const } };
    },
  }),
  defineOperation({
    id: 'auth.me',
    method: 'GET',
    path: '/auth/me',
    summary: 'The auth context of the current credential: user, site, organization, profiles, token or key',
    tag: 'Auth',
    access: 'authenticated',
    host: 'any',
    response: DataResponse(AuthContextResponse),
    // The body is computed and serialized once per cached credential (concurrent first requests share the load),
    // and dropped with the credential's cache entry: on expiry, or on any invalidation (see credential-cache.ts).
    // Warm, the handler answers synchronously (no promise to await).
    handler: ({ principal, credentialHash, services, transaction }) => {
      if (!principal) throw ApiError.unauthorized('MISSING_CREDENTIALS', 'Send one credential');
      const load = async () => serializeOnce({ data: toAuthContextResponse(await transaction((em) => loadAuthContext(em, principal))) });
      if (!credentialHash) return load();
      const ready = services.credentials.computed(credentialHash) as Awaited<ReturnType<typeof load>> | undefined;
      return ready ?? services.credentials.remembered(credentialHash, load);
    },
  }),
  defineOperation({
    id: 'auth.password.reset',
    method: 'POST',
    path: '/auth/password/reset',
    summary: 'Ask for a password reset token by email; the answer is the same whether or not the email is known',
    tag: 'Auth',
    access: 'public',
    host: 'any',
    body: Type.Object({ email: Type.String({ minLength: 3, maxLength: 254 }) }, { additionalProperties: false }),
    status: 202,
    response: Accepted,
    // Queued whatever the email: the answer takes the same time either way (a worker looks the email up and mails).
    handler: async ({ body, site, services }) => {
      const host = site ? `${site.subdomain}.${services.config.baseDomain}` : services.config.baseDomain;
      await enqueuePasswordReset(services.queue, { site: site && { id: site.id, name: site.name }, email: body.email, resetUrl: `https://${host}/reset-password` });
      return { data: { status: 'accepted', message: 'If the email belongs to an account here, a reset token is on its way' } };
    },
  }),
  defineOperation({
    id: 'auth.password.confirm',
    method: 'POST',
    path: '/auth/password/confirm',
    summary: 'Set a new password (at least 8 characters) with a reset token; ends every session of the user',
    tag: 'Auth',
    access: 'public',
    host: 'any',
    body: Type.Object(
      { token: Type.String({ minLength: 1, maxLength: 200 }), new_password: Type.String({ minLength: 8, maxLength: 200 }) },
      { additionalProperties: false },
    ),
    response: Accepted,
    handler: async ({ body, site, actor, services, transaction }) => {
      await transaction((em) => confirmPasswordReset(em, services.clock, actor, site?.id ?? null, body.token, body.new_password));
      await services.credentials.invalidate();
      return { data: { status: 'password_changed', message: 'Sign in with the new password' } };
    },
  }),
];
