import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

export const ETA_TRIGGER_TYPES = ['time_before_arrival', 'distance_away'] as const;
export type EtaTriggerType = (typeof ETA_TRIGGER_TYPES)[number];
export const ETA_RECIPIENT_TYPES = ['customer', 'driver', 'admin'] as const;
export type EtaRecipientType = (typeof ETA_RECIPIENT_TYPES)[number];
export const ETA_DELIVERY_METHODS = ['sms', 'email', 'push'] as const;
export type EtaDeliveryMethod = (typeof ETA_DELIVERY_METHODS)[number];

/**
 * When a site tells someone a driver is close: `triggerValue` is minutes for time_before_arrival and miles for
 * distance_away. The template is stored on the row (a default one until an admin writes their own).
 */
export const EtaNotificationConfigSchema = defineEntity({
  name: 'EtaNotificationConfig',
  tableName: 'eta_notification_config',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    triggerType: p.string().$type<EtaTriggerType>(),
    triggerValue: p.double().$type<number>(),
    recipientType: p.string().$type<EtaRecipientType>(),
    deliveryMethod: p.string().$type<EtaDeliveryMethod>(),
    debounceSeconds: p.integer().default(300),
    enabled: p.boolean().default(true),
    templateId: p.string(),
    templateTitle: p.text(),
    templateBody: p.text(),
    templateIsCustom: p.boolean().default(false),
    ...timestamps(),
  },
});

export type EtaNotificationConfig = InferEntity<typeof EtaNotificationConfigSchema>;
