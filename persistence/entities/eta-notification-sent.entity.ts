import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/**
 * One ETA notification sent: unique per stop, config and recipient (a trigger fires once), and the record the
 * debounce reads (when this recipient was last told about this stop). The message itself is `notificationId`.
 */
export const EtaNotificationSentSchema = defineEntity({
  name: 'EtaNotificationSent',
  tableName: 'eta_notification_sent',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    stopId: p.string(),
    jobId: p.string(),
    configId: p.string(),
    recipientUserId: p.string(),
    driverUserId: p.string(),
    notificationId: p.string(),
    /** The ETA when it fired: whole seconds and meters from the driver's position. */
    etaSeconds: p.integer(),
    distanceMeters: p.double().$type<number>(),
    sentAt: p.datetime(),
    ...timestamps(),
  },
});

export type EtaNotificationSent = InferEntity<typeof EtaNotificationSentSchema>;
