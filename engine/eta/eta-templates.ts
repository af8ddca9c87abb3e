import type { EtaRecipientType, EtaTriggerType } from '../../persistence/entities/eta-notification-config.entity.ts';
import { DomainError } from '../domain-error.ts';

/** The variables a template may use, each `{{name}}`; anything else is refused when the template is saved. */
export const TEMPLATE_VARIABLES = [
  'driver_name',
  'eta_minutes',
  'eta_time',
  'distance_miles',
  'distance_km',
  'stop_address',
  'stop_type',
  'stop_id',
  'job_id',
  'customer_name',
] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];
export type TemplateValues = Record<TemplateVariable, string>;

export type EtaTemplate = { id: string; title: string; body: string; is_custom: boolean };

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]*)\s*\}\}/g;
const KNOWN = new Set<string>(TEMPLATE_VARIABLES);

/** Customers get a friendly line; drivers and the office an operational one naming the job. */
const DEFAULTS: Record<EtaTriggerType, Record<'customer' | 'staff', { title: string; body: string }>> = {
  time_before_arrival: {
    customer: { title: 'Your driver is on the way', body: '{{driver_name}} will arrive at {{stop_address}} in about {{eta_minutes}} minutes ({{eta_time}}).' },
    staff: { title: 'Arriving in {{eta_minutes}} min', body: '{{driver_name}} arrives at {{stop_address}} ({{stop_type}}, job {{job_id}}) in about {{eta_minutes}} minutes, at {{eta_time}}.' },
  },
  distance_away: {
    customer: { title: 'Your driver is nearby', body: '{{driver_name}} is {{distance_miles}} miles from {{stop_address}} and should arrive in about {{eta_minutes}} minutes.' },
    staff: { title: '{{distance_miles}} mi from the stop', body: '{{driver_name}} is {{distance_miles}} miles from {{stop_address}} ({{stop_type}}, job {{job_id}}), arriving at {{eta_time}}.' },
  },
};

/** The template a config gets when the admin gives none (`is_custom` false); its id names the variant. */
export function defaultTemplate(trigger: EtaTriggerType, recipient: EtaRecipientType): EtaTemplate {
  const audience = recipient === 'customer' ? 'customer' : 'staff';
  return { id: `default.${trigger}.${audience}`, ...DEFAULTS[trigger][audience], is_custom: false };
}

/**
 * Refuses a template naming variables we cannot fill, so a typo is caught when it is saved, not when the customer
 * reads "{{drvier_name}}".
 * @throws DomainError 400 UNKNOWN_TEMPLATE_VARIABLE naming the field and every unknown variable
 */
export function assertKnownVariables(template: { title: string; body: string }): void {
  for (const field of ['title', 'body'] as const) {
    const unknown = [...template[field].matchAll(PLACEHOLDER)].map((m) => m[1]!).filter((name) => !KNOWN.has(name));
    if (unknown.length > 0) {
      throw new DomainError(
        400,
        'UNKNOWN_TEMPLATE_VARIABLE',
        `template.${field} uses unknown variable(s) ${[...new Set(unknown)].map((n) => `{{${n}}}`).join(', ')}; known: ${TEMPLATE_VARIABLES.join(', ')}`,
        `template.${field}`,
        { unknown_variables: [...new Set(unknown)], known_variables: [...TEMPLATE_VARIABLES] },
      );
    }
  }
}

/** Fills `{{name}}` placeholders (whitespace inside the braces allowed). */
export function renderTemplate(text: string, values: TemplateValues): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => (KNOWN.has(name) ? values[name as TemplateVariable] : whole));
}
