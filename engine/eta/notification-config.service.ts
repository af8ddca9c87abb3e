import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import {
  EtaNotificationConfigSchema,
  type EtaDeliveryMethod,
  type EtaNotificationConfig,
  type EtaRecipientType,
  type EtaTriggerType,
} from '../../persistence/entities/eta-notification-config.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { auditSnapshot } from '../admin/patch.ts';
import { DomainError } from '../domain-error.ts';
import { assertKnownVariables, defaultTemplate, type EtaTemplate } from './eta-templates.ts';

/**
 * The spec's upsert request, plus an optional `id`. Without `id` the config is found by its natural key
 * (trigger_type, recipient_type, delivery_method: one per site) and created when absent; with `id` that config is
 * updated, key fields included. `template: null` goes back to the default template; an omitted one is kept (a
 * default template follows the trigger and recipient types).
 */
export type EtaConfigUpsert = {
  id?: string;
  trigger_type: EtaTriggerType;
  trigger_value: number;
  recipient_type: EtaRecipientType;
  delivery_method: EtaDeliveryMethod;
  debounce_seconds?: number;
  enabled?: boolean;
  template?: { title: string; body: string } | null;
};

/** Thresholds past these are mistakes (a 2-day "before arrival" notice), not configurations. */
export const MAX_TRIGGER_VALUE: Record<EtaTriggerType, { max: number; unit: string }> = {
  time_before_arrival: { max: 24 * 60, unit: 'minutes' },
  distance_away: { max: 500, unit: 'miles' },
};

export const DEFAULT_DEBOUNCE_SECONDS = 300;

/** A page of the site's configs. */
export async function listEtaConfigs(em: EntityManager, options: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> }): Promise<[EtaNotificationConfig[], number]> {
  return em.findAndCount(EtaNotificationConfigSchema, {}, options);
}

/**
 * Creates or updates a config (see {@link EtaConfigUpsert}), audited in the caller's transaction. Upserts of a site
 * take turns (a transaction-scoped advisory lock), so two concurrent first upserts of one key make one row.
 * @returns the config and whether it was created
 * @throws DomainError 400 TRIGGER_VALUE_OUT_OF_RANGE (field trigger_value), 400 UNKNOWN_TEMPLATE_VARIABLE (field
 *   template.title / template.body), 404 for an unknown id, 409 ETA_CONFIG_EXISTS when an id update collides with
 *   another config's key
 */
export async function upsertEtaConfig(em: EntityManager, actor: AuditActor, siteId: string, input: EtaConfigUpsert): Promise<{ config: EtaNotificationConfig; created: boolean }> {
  const limit = MAX_TRIGGER_VALUE[input.trigger_type];
  if (!(input.trigger_value > 0 && input.trigger_value <= limit.max)) {
    throw DomainError.invalid('TRIGGER_VALUE_OUT_OF_RANGE', `trigger_value for ${input.trigger_type} is in ${limit.unit}: above 0 and at most ${limit.max}`, 'trigger_value');
  }
  if (input.template) assertKnownVariables(input.template);
  await em.execute('select pg_advisory_xact_lock(hashtext(?))', [`eta-config:${siteId}`]);
  const key = { triggerType: input.trigger_type, recipientType: input.recipient_type, deliveryMethod: input.delivery_method };
  const sameKey = await em.findOne(EtaNotificationConfigSchema, key);
  let config: EtaNotificationConfig | null;
  if (input.id) {
    config = await em.findOne(EtaNotificationConfigSchema, { id: input.id });
    if (!config) throw DomainError.notFound('ETA notification config', input.id);
    if (sameKey && sameKey.id !== config.id) {
      throw new DomainError(409, 'ETA_CONFIG_EXISTS', `Config ${sameKey.id} already has this trigger_type, recipient_type and delivery_method`, 'id');
    }
  } else {
    config = sameKey;
  }
  const before = config ? auditSnapshot(config) : null;
  const created = config === null;
  const template = templateFor(config, input);
  const values = {
    ...key,
    triggerValue: input.trigger_value,
    debounceSeconds: input.debounce_seconds ?? config?.debounceSeconds ?? DEFAULT_DEBOUNCE_SECONDS,
    enabled: input.enabled ?? config?.enabled ?? true,
    templateId: template.id,
    templateTitle: template.title,
    templateBody: template.body,
    templateIsCustom: template.is_custom,
  };
  if (config) em.assign(config, values);
  else config = em.create(EtaNotificationConfigSchema, { id: newId('etaConfig'), siteId, ...values });
  recordAudit(em, actor, { siteId, action: created ? 'create' : 'update', entityType: 'EtaNotificationConfig', entityId: config.id, before, after: auditSnapshot(config) });
  await em.flush();
  return { config, created };
}

/** The stored template as the API shows it. */
export function templateOf(config: EtaNotificationConfig): EtaTemplate {
  return { id: config.templateId, title: config.templateTitle, body: config.templateBody, is_custom: config.templateIsCustom };
}

function templateFor(config: EtaNotificationConfig | null, input: EtaConfigUpsert): EtaTemplate {
  if (input.template) return { id: config?.templateIsCustom ? config.templateId : newId('etaTemplate'), ...input.template, is_custom: true };
  if (input.template === undefined && config?.templateIsCustom) return templateOf(config);
  return defaultTemplate(input.trigger_type, input.recipient_type);
}
