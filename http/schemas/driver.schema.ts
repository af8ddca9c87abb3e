import { Type } from 'typebox';
import { PageNumber } from '../pagination.ts';
import { Id, Nullable, Timestamp } from './common.schema.ts';

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const Availability = Type.Union([Type.Literal('offline'), Type.Literal('available'), Type.Literal('busy'), Type.Literal('on_break')]);

export const DriverStatusBody = Type.Object({ availability: Availability }, { additionalProperties: false });

export const DriverStatusResponse = Type.Object(
  { user_id: Id, availability: Availability, version: Type.Integer(), updated_at: Nullable(Timestamp) },
  { additionalProperties: false },
);

export const LocationBody = Type.Object(
  {
    lat: Type.Number({ minimum: -90, maximum: 90 }),
    lng: Type.Number({ minimum: -180, maximum: 180 }),
    heading: Type.Optional(Type.Number({ minimum: 0, maximum: 360, description: 'degrees clockwise from north' })),
    speed: Type.Optional(Type.Number({ minimum: 0, maximum: 150, description: 'metres per second' })),
    accuracy: Type.Optional(Type.Number({ minimum: 0, maximum: 100_000, description: 'metres' })),
    recorded_at: Timestamp,
  },
  { additionalProperties: false },
);

export const LocationAck = Type.Object(
  { accepted: Type.Boolean(), reason: Type.Optional(Type.Literal('stale')) },
  { additionalProperties: false },
);

export const LocationQuery = Type.Object({ user_id: Type.Optional(Id) }, { additionalProperties: false });

const NullableNumber = Nullable(Type.Number());
export const DriverLocationResponse = Type.Object(
  {
    user_id: Id,
    availability: Availability,
    lat: NullableNumber,
    lng: NullableNumber,
    heading: NullableNumber,
    speed: NullableNumber,
    accuracy: NullableNumber,
    recorded_at: Nullable(Timestamp),
  },
  { additionalProperties: false },
);

export const DriverCancelBody = Type.Object({ job_id: Id, cancellation_notes: Text(2000) }, { additionalProperties: false });
export const DriverReturnBody = Type.Object({ job_id: Id }, { additionalProperties: false });
export const DriverStopStateBody = Type.Object(
  { stop_id: Id, workflow_state_id: Id, cancellation_notes: Type.Optional(Text(2000)) },
  { additionalProperties: false },
);

export const DriverJobSearchBody = Type.Object(
  {
    page: Type.Optional(PageNumber),
    page_size: Type.Optional(Type.Integer({ minimum: 1, description: 'clamped to 100' })),
    workflow_state_ids: Type.Optional(Type.Array(Id, { maxItems: 50 })),
    completed_at_start: Type.Optional(Timestamp),
    completed_at_end: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
);
