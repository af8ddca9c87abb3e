import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../../persistence/audit.ts';
import type { EtaNotificationConfig } from '../../persistence/entities/eta-notification-config.entity.ts';
import { EtaNotificationSentSchema } from '../../persistence/entities/eta-notification-sent.entity.ts';
import { newId } from '../../persistence/ids.ts';
import type { NotificationMessage } from '../../persistence/entities/notification-message.entity.ts';
import { DomainError } from '../domain-error.ts';
import { sendNotification, type NotificationInput } from '../notify/send-notification.ts';
import { addressFor, recipientsFor, type Recipient } from './eta-recipients.ts';
import { renderTemplate, type TemplateValues } from './eta-templates.ts';
import type { StopEstimate } from './stop-eta.ts';

export const METERS_PER_MILE = 1609.344;

export type TriggerContext = {
  siteId: string;
  driver: { userId: string; name: string };
  timezone: string;
  now: Date;
};

export type SentSummary = { stopId: string; configId: string; recipientUserId: string; notificationId: string };

const SYSTEM = { userId: null, applicationId: null, requestId: 'eta-check' };

/**
 * Whether a stop's estimate is inside a config's threshold (minutes before arrival, or miles away along the road).
 * A stop of a route of a later day (not started) is never inside one. A stop reached only after waiting for a window (its own or an earlier stop's) is not "miles away" yet: the driver
 * passing near it today is not coming for it, and a notice now would be the only one (it fires once).
 */
export function crossesThreshold(config: Pick<EtaNotificationConfig, 'triggerType' | 'triggerValue'>, estimate: StopEstimate): boolean {
  // A stop of a route whose day has not begun is not due at all: just before midnight it would read "in 15 minutes".
  if (estimate.awaitsRouteDay) return false;
  if (config.triggerType === 'time_before_arrival') return estimate.cumulativeDurationSeconds <= config.triggerValue * 60;
  return estimate.waitedSeconds === 0 && estimate.cumulativeDistanceMeters <= config.triggerValue * METERS_PER_MILE;
}

/**
 * Sends what the estimates make due, in the caller's transaction (the caller serializes checks of one driver):
 * for each stop, config (in creation order) and recipient, a notification goes out when the stop is inside the
 * threshold, this (stop, config, recipient) never fired (the `eta_notification_sent` row; unique, so at most once
 * even if two processes race), and the recipient got no notification about this stop within the config's
 * `debounce_seconds`. A debounced trigger is not recorded, so it may still fire after the window if the stop is
 * then still inside its threshold. Recipients with no address for the channel are skipped.
 */
export async function sendDueNotifications(em: EntityManager, ctx: TriggerContext, configs: EtaNotificationConfig[], estimates: StopEstimate[]): Promise<SentSummary[]> {
  const sent: SentSummary[] = [];
  for (const estimate of estimates) {
    const due = configs.filter((config) => crossesThreshold(config, estimate));
    if (due.length === 0) continue;
    const customer = estimate.stop.customerUserId ? await recipientsFor(em, ctx.siteId, 'customer', estimate.stop, ctx.driver.userId) : [];
    for (const config of due) {
      for (const recipient of await recipientsFor(em, ctx.siteId, config.recipientType, estimate.stop, ctx.driver.userId)) {
        const to = addressFor(config.deliveryMethod, recipient);
        if (!to || !(await mayNotify(em, config, estimate, recipient, ctx.now))) continue;
        const values = templateValues(ctx, estimate, customer[0] ?? null);
        const message = await sendOrSkip(em, ctx.siteId, {
          channel: config.deliveryMethod,
          to,
          subject: renderTemplate(config.templateTitle, values),
          body: renderTemplate(config.templateBody, values),
        });
        if (!message) continue;
        const row = em.create(EtaNotificationSentSchema, {
          id: newId('etaSent'),
          siteId: ctx.siteId,
          stopId: estimate.stop.stopId,
          jobId: estimate.stop.jobId,
          configId: config.id,
          recipientUserId: recipient.userId,
          driverUserId: ctx.driver.userId,
          notificationId: message.id,
          etaSeconds: estimate.cumulativeDurationSeconds,
          distanceMeters: estimate.cumulativeDistanceMeters,
          sentAt: ctx.now,
        });
        recordAudit(em, SYSTEM, {
          siteId: ctx.siteId,
          action: 'create',
          entityType: 'EtaNotificationSent',
          entityId: row.id,
          before: null,
          after: { stop_id: row.stopId, job_id: row.jobId, config_id: row.configId, recipient_user_id: row.recipientUserId, notification_id: row.notificationId, eta_seconds: row.etaSeconds },
        });
        await em.flush();
        sent.push({ stopId: row.stopId, configId: config.id, recipientUserId: recipient.userId, notificationId: message.id });
      }
    }
  }
  return sent;
}

/**
 * Sends one message; a recipient whose address the channel refuses (a malformed email on file) is skipped rather
 * than failing, and so retrying, the whole check for everyone else.
 */
async function sendOrSkip(em: EntityManager, siteId: string, input: NotificationInput): Promise<NotificationMessage | null> {
  try {
    return await sendNotification(em, siteId, input);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'INVALID_NOTIFICATION') return null;
    throw error;
  }
}

/** Never fired for this stop, config and recipient, and nothing sent to the recipient about the stop lately. */
async function mayNotify(em: EntityManager, config: EtaNotificationConfig, estimate: StopEstimate, recipient: Recipient, now: Date): Promise<boolean> {
  const stopId = estimate.stop.stopId;
  const fired = await em.count(EtaNotificationSentSchema, { stopId, configId: config.id, recipientUserId: recipient.userId });
  if (fired > 0) return false;
  const since = new Date(now.getTime() - config.debounceSeconds * 1000);
  const recent = await em.count(EtaNotificationSentSchema, { stopId, recipientUserId: recipient.userId, sentAt: { $gt: since } });
  return recent === 0;
}

function templateValues(ctx: TriggerContext, estimate: StopEstimate, customer: Recipient | null): TemplateValues {
  const meters = estimate.cumulativeDistanceMeters;
  return {
    driver_name: ctx.driver.name,
    eta_minutes: String(Math.ceil(estimate.cumulativeDurationSeconds / 60)),
    eta_time: clockTime(estimate.arrivalAt, ctx.timezone),
    distance_miles: (meters / METERS_PER_MILE).toFixed(1),
    distance_km: (meters / 1000).toFixed(1),
    stop_address: estimate.stop.address,
    stop_type: estimate.stop.type,
    stop_id: estimate.stop.stopId,
    job_id: estimate.stop.jobId,
    customer_name: customer?.name ?? estimate.stop.contactName ?? '',
  };
}

/** `14:05` in the site's time zone (UTC if the zone is unknown to this runtime). */
function clockTime(at: Date, timezone: string): string {
  const format = (timeZone: string) => new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit' }).format(at);
  try {
    return format(timezone);
  } catch {
    return format('UTC');
  }
}
