import { Type } from 'typebox';
import type { AuthContext } from '../../engine/auth/auth-context.ts';
import type { IssuedSession, ProfileChoice } from '../../engine/auth/session.service.ts';
import type { User } from '../../persistence/entities/user.entity.ts';
import { ApplicationResponse, toApplicationResponse } from './application.schema.ts';
import { Id, Nullable, Timestamp } from './common.schema.ts';
import { OrganizationResponse, toOrganizationResponse } from './organization.schema.ts';
import { SiteResponse, toSiteResponse } from './site.schema.ts';
import { ProfileResponse, SiteRoleSchema, toProfileResponse } from './user.schema.ts';

export const SignInBody = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

const BasicUser = Type.Object(
  {
    id: Id,
    email: Type.String(),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    phone_country: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

const AccessTokenRecord = Type.Object(
  {
    id: Id,
    access_profile_id: Nullable(Type.String()),
    application_id: Nullable(Type.String()),
    site_id: Nullable(Type.String()),
    user_id: Id,
    expiration_date: Timestamp,
    is_active: Type.Boolean(),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

export const AuthContextResponse = Type.Object(
  {
    access_token: Nullable(AccessTokenRecord),
    active_profile: Nullable(ProfileResponse),
    application: Nullable(ApplicationResponse),
    organization: Nullable(OrganizationResponse),
    site: Nullable(SiteResponse),
    user: Type.Object(
      { ...BasicUser.properties, display_name: Nullable(Type.String()), is_platform_operator: Type.Boolean(), is_service_account: Type.Boolean() },
      { additionalProperties: false },
    ),
    user_profiles: Type.Array(ProfileResponse),
  },
  { additionalProperties: false },
);

export const SessionResponse = Type.Object(
  {
    type: Type.Literal('session'),
    access_token: Type.String({ description: 'send as x-access-token' }),
    refresh_token: Type.String({ description: 'single use: POST /auth/refresh returns a new one' }),
    expires_in: Type.Integer({ description: 'seconds until the access token expires' }),
    expires_at: Timestamp,
    refresh_token_expires_at: Timestamp,
    context: AuthContextResponse,
  },
  { additionalProperties: false },
);

export const PreAuthResponse = Type.Object(
  {
    type: Type.Literal('pre_authentication'),
    pre_auth_token: Type.String({ description: 'short-lived; finish with POST /auth/site' }),
    expires_at: Timestamp,
    user: BasicUser,
    profiles: Type.Array(
      Type.Object(
        { id: Id, site_id: Id, site_name: Type.String(), subdomain: Type.String(), role: SiteRoleSchema },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export function toBasicUser(u: User) {
  return { id: u.id, email: u.email, first_name: u.firstName ?? null, last_name: u.lastName ?? null, phone: u.phone ?? null, phone_country: u.phoneCountry ?? null };
}

export function toAuthContextResponse(c: AuthContext) {
  const t = c.accessToken;
  return {
    access_token: t
      ? {
          id: t.id,
          access_profile_id: t.profileId ?? null,
          application_id: t.applicationId ?? null,
          site_id: t.siteId ?? null,
          user_id: t.userId,
          expiration_date: t.expiresAt.toISOString(),
          is_active: t.isActive,
          created_at: t.createdAt.toISOString(),
        }
      : null,
    active_profile: c.activeProfile ? toProfileResponse(c.activeProfile) : null,
    application: c.application ? toApplicationResponse(c.application) : null,
    organization: c.organization ? toOrganizationResponse(c.organization) : null,
    site: c.site ? toSiteResponse(c.site) : null,
    user: {
      ...toBasicUser(c.user),
      display_name: c.user.displayName ?? null,
      is_platform_operator: c.user.isPlatformOperator,
      is_service_account: c.user.isServiceAccount,
    },
    user_profiles: c.userProfiles.map(toProfileResponse),
  };
}

export function toSessionResponse(s: IssuedSession, context: AuthContext, now: Date) {
  return {
    type: 'session' as const,
    access_token: s.accessToken,
    refresh_token: s.refreshToken,
    expires_in: Math.round((s.accessExpiresAt.getTime() - now.getTime()) / 1000),
    expires_at: s.accessExpiresAt.toISOString(),
    refresh_token_expires_at: s.refreshExpiresAt.toISOString(),
    context: toAuthContextResponse(context),
  };
}

export function toPreAuthResponse(token: string, expiresAt: Date, user: User, choices: ProfileChoice[]) {
  return {
    type: 'pre_authentication' as const,
    pre_auth_token: token,
    expires_at: expiresAt.toISOString(),
    user: toBasicUser(user),
    profiles: choices.map((c) => ({
      id: c.profile.id,
      site_id: c.profile.siteId,
      site_name: c.siteName,
      subdomain: c.subdomain,
      role: c.profile.role as 'admin' | 'dispatcher' | 'driver' | 'customer',
    })),
  };
}
