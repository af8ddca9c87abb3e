import type { EntityManager } from '@mikro-orm/postgresql';
import { AccessTokenSchema, type AccessToken } from '../../persistence/entities/access-token.entity.ts';
import { ApplicationSchema, type Application } from '../../persistence/entities/application.entity.ts';
import { OrganizationSchema, type Organization } from '../../persistence/entities/organization.entity.ts';
import { SiteSchema, type Site } from '../../persistence/entities/site.entity.ts';
import { UserProfileSchema, type UserProfile } from '../../persistence/entities/user-profile.entity.ts';
import { UserSchema, type User } from '../../persistence/entities/user.entity.ts';

/** Everything a client needs to know about its own credential (the spec's Auth context). */
export type AuthContext = {
  accessToken: AccessToken | null;
  activeProfile: UserProfile | null;
  application: Application | null;
  organization: Organization | null;
  site: Site | null;
  user: User;
  userProfiles: UserProfile[];
};

export type CredentialRef = {
  siteId: string | null;
  userId: string;
  profileId: string | null;
  applicationId: string | null;
  accessTokenId: string | null;
};

/** Loads the auth context of a credential: its token record (sessions), key (API keys), user, site and profiles. */
export async function loadAuthContext(em: EntityManager, ref: CredentialRef): Promise<AuthContext> {
  const user = await em.findOneOrFail(UserSchema, { id: ref.userId });
  const site = ref.siteId ? await em.findOne(SiteSchema, { id: ref.siteId }) : null;
  const organizationId = site?.organizationId ?? user.organizationId ?? null;
  const userProfiles = ref.siteId ? await em.find(UserProfileSchema, { userId: user.id }, { orderBy: { createdAt: 'asc' } }) : [];
  const application = ref.applicationId ? await em.findOne(ApplicationSchema, { id: ref.applicationId }) : null;
  return {
    accessToken: ref.accessTokenId ? await em.findOne(AccessTokenSchema, { id: ref.accessTokenId }) : null,
    activeProfile: ref.profileId
      ? (userProfiles.find((p) => p.id === ref.profileId) ?? null)
      : (userProfiles.find((p) => p.isActive) ?? null),
    application,
    organization: organizationId ? await em.findOne(OrganizationSchema, { id: organizationId }) : null,
    site,
    user,
    userProfiles,
  };
}
