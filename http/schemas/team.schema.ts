import { Type } from 'typebox';
import type { Team } from '../../persistence/entities/team.entity.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });

export const TeamResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    name: Type.String(),
    description: Nullable(Type.String()),
    is_active: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const CreateTeamBody = Type.Object({ name: Name, description: Type.Optional(Description) }, { additionalProperties: false });

export const UpdateTeamBody = Type.Object(
  { id: Id, name: Type.Optional(Name), description: Clearable(Description), is_active: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export function toTeamResponse(t: Team) {
  return {
    id: t.id,
    site_id: t.siteId,
    name: t.name,
    description: t.description ?? null,
    is_active: t.isActive,
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}
