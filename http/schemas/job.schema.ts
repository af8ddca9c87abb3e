import { Type } from 'typebox';
import { MAX_BULK_IDS, MAX_STOPS_PER_JOB } from '../../engine/jobs/job-input.ts';
import { addressTextUpdate } from './address.schema.ts';
import { BulkFailure, Clearable, Id, Nullable, Point, Timestamp } from './common.schema.ts';
import { CustomFieldValuesBody, CustomFieldValuesResponse } from './customfield.schema.ts';
import { contact } from './organization.schema.ts';

const Text = (max: number) => Type.String({ maxLength: max });
const StopType = Type.String({ pattern: '^[a-z][a-z_]{0,31}$', description: 'pickup, dropoff, service, ...' });
const Line = Type.String({ minLength: 1, maxLength: 300 });

const stopFields = {
  type: StopType,
  address_id: Type.Optional(Id),
  street_address: Type.Optional(Line),
  street_address2: Type.Optional(Line),
  city: Type.Optional(Line),
  state: Type.Optional(Line),
  postal_code: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
  country: Type.Optional(Line),
  complete_after: Type.Optional(Timestamp),
  complete_before: Type.Optional(Timestamp),
  contact_name: Type.Optional(Text(200)),
  contact_phone: Type.Optional(contact.Phone),
  contact_phone_country: Type.Optional(contact.PhoneCountry),
  customer_notes: Type.Optional(Text(2000)),
  driver_notes: Type.Optional(Text(2000)),
  internal_notes: Type.Optional(Text(2000)),
  custom_fields: Type.Optional(CustomFieldValuesBody),
};

export const StopCreate = Type.Object(
  { ...stopFields, order: Type.Optional(Type.Integer({ minimum: 0 })), point: Type.Optional(Point) },
  { additionalProperties: false, description: 'address_id, or an inline address with a point' },
);

export const JobCreateBody = Type.Object(
  {
    customer_user_id: Type.Optional(Id),
    customer_first_name: Type.Optional(Text(100)),
    customer_last_name: Type.Optional(Text(100)),
    customer_email: Type.Optional(contact.Email),
    customer_phone: Type.Optional(contact.Phone),
    customer_phone_country: Type.Optional(contact.PhoneCountry),
    service_type_id: Type.Optional(Id),
    estimate_id: Type.Optional(Id),
    driver_user_id: Type.Optional(Id),
    option_ids: Type.Optional(Type.Array(Id, { maxItems: 50 })),
    customer_notes: Type.Optional(Text(2000)),
    driver_notes: Type.Optional(Text(2000)),
    internal_notes: Type.Optional(Text(2000)),
    payment_method: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'e.g. cash, card, invoice' })),
    override_zone_restriction: Type.Optional(Type.Boolean({ description: 'staff only; ignored for customers' })),
    custom_fields: Type.Optional(CustomFieldValuesBody),
    stops: Type.Array(StopCreate, { minItems: 1, maxItems: MAX_STOPS_PER_JOB }),
  },
  { additionalProperties: false },
);

const StopUpdate = Type.Object(
  {
    id: Id,
    type: Type.Optional(StopType),
    address_id: Type.Optional(Id),
    ...addressTextUpdate,
    complete_after: Clearable(Timestamp),
    complete_before: Clearable(Timestamp),
    contact_name: Clearable(Text(200)),
    contact_phone: Clearable(contact.Phone),
    contact_phone_country: Clearable(contact.PhoneCountry),
    customer_notes: Clearable(Text(2000)),
    driver_notes: Clearable(Text(2000)),
    internal_notes: Clearable(Text(2000)),
    custom_fields: Clearable(CustomFieldValuesBody),
  },
  { additionalProperties: false },
);

const jobUpdateFields = {
  customer_user_id: Type.Optional(Id),
  customer_notes: Clearable(Text(2000)),
  driver_notes: Clearable(Text(2000)),
  internal_notes: Clearable(Text(2000)),
  payment_method: Clearable(Type.String({ minLength: 1, maxLength: 50 })),
  option_ids: Clearable(Type.Array(Id, { maxItems: 50 })),
  custom_fields: Clearable(CustomFieldValuesBody),
  stops: Type.Optional(Type.Array(StopUpdate, { maxItems: MAX_STOPS_PER_JOB })),
  override_zone_restriction: Type.Optional(Type.Boolean({ description: 'staff only: a stop may move into a banned zone; customers are always refused' })),
};

export const JobPutBody = Type.Object({ id: Id, ...jobUpdateFields }, { additionalProperties: false });
export const JobPatchBody = Type.Object(jobUpdateFields, { additionalProperties: false });
export const StopPutBody = Type.Object(
  { ...StopUpdate.properties, override_zone_restriction: Type.Optional(Type.Boolean({ description: 'the stop may move into a banned zone' })) },
  { additionalProperties: false },
);

/** The reason given with a move: kept in its audit record, and on the entity for a cancel, a failure or a move that requires it. */
const MoveReason = Type.Optional(
  Type.String({ maxLength: 2000, description: "the move's reason: in its audit record always; the entity's cancellation_notes for a cancel, a failure or a move that requires it" }),
);

export const JobStateBody = Type.Object({ job_id: Id, workflow_state_id: Id, cancellation_notes: MoveReason }, { additionalProperties: false });
export const StopStateBody = Type.Object({ stop_id: Id, workflow_state_id: Id, cancellation_notes: MoveReason }, { additionalProperties: false });

const BulkIds = Type.Array(Id, { minItems: 1, maxItems: MAX_BULK_IDS });
export const BulkCancelBody = Type.Object({ ids: BulkIds, cancellation_notes: Type.Optional(Text(2000)) }, { additionalProperties: false });
export const BulkIdsBody = Type.Object({ ids: BulkIds }, { additionalProperties: false });

const StateView = Type.Object({ id: Type.String(), key: Type.String(), name: Type.String(), phase: Type.String() }, { additionalProperties: false });
const NullableText = Nullable(Type.String());

export const StopResponse = Type.Object(
  {
    id: Id,
    job_id: Id,
    order: Type.Integer(),
    type: Type.String(),
    workflow_state_id: Type.String(),
    workflow_state: StateView,
    phase: Type.String(),
    version: Type.Integer(),
    address_id: Type.String(),
    address: Nullable(
      Type.Object(
        { id: Id, formatted_name: Type.String(), street_address: NullableText, street_address2: NullableText, city: NullableText, state: NullableText, postal_code: NullableText, country: NullableText, point: Point },
        { additionalProperties: false },
      ),
    ),
    complete_after: Nullable(Timestamp),
    complete_before: Nullable(Timestamp),
    contact_name: NullableText,
    contact_phone: NullableText,
    contact_phone_country: NullableText,
    customer_notes: NullableText,
    driver_notes: NullableText,
    internal_notes: Type.Optional(NullableText),
    cancellation_notes: NullableText,
    custom_fields: CustomFieldValuesResponse,
    completed_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const JobResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    workflow_state_id: Type.String(),
    workflow_state: StateView,
    phase: Type.String(),
    version: Type.Integer(),
    customer_user_id: NullableText,
    service_type_id: NullableText,
    option_ids: Type.Array(Type.String()),
    estimate_id: NullableText,
    driver_user_id: NullableText,
    route_id: NullableText,
    customer_notes: NullableText,
    driver_notes: NullableText,
    internal_notes: Type.Optional(NullableText),
    payment_method: NullableText,
    cancellation_notes: NullableText,
    custom_fields: CustomFieldValuesResponse,
    created_by_user_id: NullableText,
    completed_at: Nullable(Timestamp),
    cancelled_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
    stops: Type.Optional(Type.Array(StopResponse)),
  },
  { additionalProperties: false },
);

export const BulkIdsResult = Type.Object({ succeeded: Type.Array(Type.String()), failed: Type.Array(BulkFailure) }, { additionalProperties: false });
export const BulkJobsResult = Type.Object({ succeeded: Type.Array(JobResponse), failed: Type.Array(BulkFailure) }, { additionalProperties: false });

const StateRef = Type.Object({ id: Type.String(), key: Type.String(), phase: Type.String() }, { additionalProperties: false });
export const TimelineResponse = Type.Object(
  {
    job_id: Id,
    version: Type.Integer(),
    current_state_id: Type.String(),
    transitions: Type.Array(
      Type.Object(
        { from: Nullable(StateRef), to: StateRef, event: Type.String(), role: NullableText, user_id: NullableText, application_id: NullableText, request_id: NullableText, at: Timestamp },
        { additionalProperties: false },
      ),
    ),
    allowed_moves: Type.Array(Type.Object({ id: Type.String(), key: Type.String() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
