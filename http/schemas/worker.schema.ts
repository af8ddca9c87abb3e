import { Type } from 'typebox';
import type { WorkerFields } from '../../engine/fleet/worker.service.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';
import { CustomFieldValuesBody, CustomFieldValuesResponse } from './customfield.schema.ts';
import { contact } from './organization.schema.ts';

export const OperationalStatusSchema = Type.Union([Type.Literal('active'), Type.Literal('inactive'), Type.Literal('suspended')], {
  description: "the office's decision whether the worker may be dispatched; live availability is the driver's",
});
const IdList = Type.Array(Id, { maxItems: 100, uniqueItems: true });
const Skills = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50, uniqueItems: true, description: 'free-form skill tags, matched exactly' });
const MaxLoad = Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'most open jobs (assigned or in progress) at once; a job counts 1 whatever it carries' });
const Notes = Type.String({ maxLength: 2000 });
const Name = Type.String({ minLength: 1, maxLength: 100 });

export const WorkerResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    email: Type.String(),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    display_name: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    default_vehicle_id: Nullable(Id),
    team_ids: Type.Array(Id),
    zone_ids: Type.Array(Id),
    skills: Type.Array(Type.String()),
    operational_status: OperationalStatusSchema,
    max_load: Nullable(Type.Integer()),
    notes: Nullable(Type.String()),
    custom_fields: CustomFieldValuesResponse,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false, description: 'a driver of the site: user basics (id is the user id) and dispatch details' },
);

const details = {
  default_vehicle_id: Type.Optional(Id),
  team_ids: Type.Optional(IdList),
  zone_ids: Type.Optional(IdList),
  skills: Type.Optional(Skills),
  operational_status: Type.Optional(OperationalStatusSchema),
  max_load: Type.Optional(MaxLoad),
  notes: Type.Optional(Notes),
  custom_fields: Type.Optional(CustomFieldValuesBody),
};

export const CreateWorkerBody = Type.Object(
  {
    user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'an existing user with a driver profile on this site' })),
    email: Type.Optional(contact.Email),
    first_name: Type.Optional(Name),
    last_name: Type.Optional(Name),
    phone: Type.Optional(contact.Phone),
    password: Type.Optional(Type.String({ minLength: 8, maxLength: 200 })),
    ...details,
  },
  { additionalProperties: false, description: 'user_id, or email (+ names, phone, password) to create the driver' },
);

export const UpdateWorkerBody = Type.Object(
  {
    id: Id,
    default_vehicle_id: Clearable(Id),
    team_ids: Clearable(IdList),
    zone_ids: Clearable(IdList),
    skills: Clearable(Skills),
    operational_status: Type.Optional(OperationalStatusSchema),
    max_load: Clearable(MaxLoad),
    notes: Clearable(Notes),
    custom_fields: Type.Optional(CustomFieldValuesBody),
  },
  { additionalProperties: false },
);

export function toWorkerResponse({ user, worker }: WorkerFields) {
  return {
    id: user.id,
    site_id: worker.siteId,
    email: user.email,
    first_name: user.firstName ?? null,
    last_name: user.lastName ?? null,
    display_name: user.displayName ?? null,
    phone: user.phone ?? null,
    default_vehicle_id: worker.defaultVehicleId ?? null,
    team_ids: worker.teamIds,
    zone_ids: worker.zoneIds,
    skills: worker.skills,
    operational_status: worker.operationalStatus,
    max_load: worker.maxLoad ?? null,
    notes: worker.notes ?? null,
    custom_fields: worker.customFields ?? {},
    created_at: worker.createdAt.toISOString(),
    updated_at: worker.updatedAt.toISOString(),
  };
}
