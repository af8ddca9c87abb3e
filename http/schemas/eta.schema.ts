import { Type } from 'typebox';
import { templateOf } from '../../engine/eta/notification-config.service.ts';
import { TEMPLATE_VARIABLES } from '../../engine/eta/eta-templates.ts';
import {
  ETA_DELIVERY_METHODS,
  ETA_RECIPIENT_TYPES,
  ETA_TRIGGER_TYPES,
  type EtaNotificationConfig,
} from '../../persistence/entities/eta-notification-config.entity.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';

const TriggerType = Type.Union([Type.Literal('time_before_arrival'), Type.Literal('distance_away')], { description: ETA_TRIGGER_TYPES.join(', ') });
const RecipientType = Type.Union([Type.Literal('customer'), Type.Literal('driver'), Type.Literal('admin')], { description: ETA_RECIPIENT_TYPES.join(', ') });
const DeliveryMethod = Type.Union([Type.Literal('sms'), Type.Literal('email'), Type.Literal('push')], { description: ETA_DELIVERY_METHODS.join(', ') });
const variables = TEMPLATE_VARIABLES.map((v) => `{{${v}}}`).join(', ');

const StopEta = Type.Object(
  {
    stop_id: Id,
    stop_index: Type.Integer({ description: "0-based place of the stop in its job's stop order" }),
    type: Type.String(),
    estimated_arrival_at: Nullable(Timestamp),
    estimated_completion_at: Nullable(Timestamp),
    cumulative_distance_meters: Nullable(Type.Number({ description: "from the driver's last known position, along the visit order" })),
    cumulative_duration_seconds: Nullable(Type.Integer({ description: 'travel plus the service times of the stops visited before this one' })),
  },
  { additionalProperties: false, description: 'times and figures are null while no driver position is known' },
);

export const StopEtaResult = Type.Object(
  {
    job_id: Id,
    driver_id: Nullable(Id),
    computed_at: Timestamp,
    best_driver_id: Nullable(Id),
    eligible_driver_count: Type.Integer(),
    located_driver_count: Type.Integer(),
    pickup_duration_seconds: Nullable(Type.Number()),
    pickup_eta: Nullable(Timestamp),
    stops: Type.Array(StopEta),
  },
  { additionalProperties: false },
);

const Template = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    body: Type.String({ minLength: 1, maxLength: 1600 }),
  },
  { additionalProperties: false, description: `variables: ${variables}` },
);

export const EtaConfigUpsertBody = Type.Object(
  {
    id: Type.Optional(Id),
    trigger_type: TriggerType,
    trigger_value: Type.Number({ minimum: 0, description: 'above 0: minutes for time_before_arrival (at most 1440), miles for distance_away (at most 500)' }),
    recipient_type: RecipientType,
    delivery_method: DeliveryMethod,
    debounce_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400, description: 'default 300' })),
    enabled: Type.Optional(Type.Boolean()),
    template: Clearable(Template),
  },
  { additionalProperties: false },
);

export const EtaConfigResponse = Type.Object(
  {
    id: Id,
    enabled: Type.Boolean(),
    debounce_seconds: Type.Integer(),
    delivery_method: DeliveryMethod,
    recipient_type: RecipientType,
    trigger_type: TriggerType,
    trigger_value: Type.Number(),
    template: Type.Object({ id: Type.String(), title: Type.String(), body: Type.String(), is_custom: Type.Boolean() }, { additionalProperties: false }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export function toEtaConfigResponse(config: EtaNotificationConfig) {
  return {
    id: config.id,
    enabled: config.enabled,
    debounce_seconds: config.debounceSeconds,
    delivery_method: config.deliveryMethod,
    recipient_type: config.recipientType,
    trigger_type: config.triggerType,
    trigger_value: config.triggerValue,
    template: templateOf(config),
    created_at: config.createdAt.toISOString(),
    updated_at: config.updatedAt.toISOString(),
  };
}
