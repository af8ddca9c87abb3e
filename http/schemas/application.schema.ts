import { Type } from 'typebox';
import type { Application } from '../../persistence/entities/application.entity.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';
import { SiteRoleSchema } from './user.schema.ts';

export const ApplicationResponse = Type.Object(
  {
    id: Id,
    name: Type.String(),
    api_key: Type.String({ description: 'the full key only in the creation response; a masked preview after that' }),
    role: SiteRoleSchema,
    description: Nullable(Type.String()),
    is_active: Type.Boolean(),
    organization_id: Id,
    site_id: Id,
    service_user_id: Id,
    package_name: Nullable(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const CreateApplicationBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    role: SiteRoleSchema,
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    package_name: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const UpdateApplicationBody = Type.Object(
  {
    id: Id,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    role: Type.Optional(SiteRoleSchema),
    description: Clearable(Type.String({ maxLength: 2000 })),
    package_name: Clearable(Type.String({ maxLength: 200 })),
    is_active: Type.Optional(Type.Boolean({ description: 'false revokes the key' })),
  },
  { additionalProperties: false },
);

/** `plainKey` only right after creation: it is never stored and cannot be shown again. */
export function toApplicationResponse(a: Application, plainKey?: string) {
  return {
    id: a.id,
    name: a.name,
    api_key: plainKey ?? `${a.keyPrefix}…`,
    role: a.role as 'admin' | 'dispatcher' | 'driver' | 'customer',
    description: a.description ?? null,
    is_active: a.isActive,
    organization_id: a.organizationId,
    site_id: a.siteId,
    service_user_id: a.serviceUserId,
    package_name: a.packageName ?? null,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}
