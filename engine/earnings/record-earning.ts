import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { recordAudit } from '../../persistence/audit.ts';
import { DriverEarningSchema } from '../../persistence/entities/driver-earning.entity.ts';
import { SiteSchema } from '../../persistence/entities/site.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { createMappingProvider } from '../mapping/create-mapping-provider.ts';
import type { MappingProvider } from '../mapping/mapping-provider.ts';
import type { MappingNetworkPolicy } from '../mapping/network-policy.ts';
import { mappingProviderForSite } from '../mapping/site-provider.ts';
import { DomainError } from '../domain-error.ts';
import type { JobHandler } from '../queue/durable-queue.ts';
import { computeEarning, type EarningInputs } from './compute-earning.ts';
import { isPayableCompletion } from './payable-completion.ts';
import { defaultEarningsRule, fromDecimal } from './earnings-rule.service.ts';
import { distanceOf, jobEarningFacts } from './job-earning-inputs.ts';

const SYSTEM = { userId: null, applicationId: null, requestId: null };
const OFFLINE = createMappingProvider(null);

type StateChange = { site_id: string; data: unknown };

type EarningsDeps = { orm: MikroORM; logger: Logger; crypto: FieldCrypto; mappingPolicy: MappingNetworkPolicy };

/**
 * The earnings consumer of the outbox events: when a job reaches the completed phase with a driver, that driver's
 * earning is computed with the site's default rule and stored, once (the job id is unique per site, and a repeated
 * event finds the earning already there). A site without a default rule records nothing: pay is opt-in.
 * The job is measured in a first transaction, its distance by the site's mapping provider between the two (a
 * network call holds no connection), and the earning written in a second.
 */
export function createEarningsConsumer(deps: EarningsDeps): JobHandler {
  return async (job) => {
    const { site_id: siteId, data } = job.data as StateChange;
    if (!isPayableCompletion(job.name, data)) return;
    const measured = await inTenantScope(deps.orm, { siteId }, async (em) => {
      if (await alreadyEarned(em, data.id)) return null;
      return { facts: await jobEarningFacts(em, data.id), mapping: await siteMapping(em, deps, siteId) };
    });
    if (!measured) return;
    const distanceMeters = await distanceOf(measured.mapping, measured.facts.path).catch((error: unknown) => {
      // A routing engine down must not cost the driver their earning: the offline estimate stands in (its distance
      // is in the record, job_distance_meters), and the log says so.
      deps.logger.warn({ err: error, siteId, jobId: data.id }, 'earning distance from the offline estimate: the site mapping provider failed');
      return distanceOf(OFFLINE, measured.facts.path);
    });
    const inputs = { ...measured.facts.inputs, distanceMeters, completedAt: measured.facts.completedAt };
    const recorded = await inTenantScope(deps.orm, { siteId }, (em) => recordEarning(em, siteId, data.id, data.driver_user_id, inputs));
    if (recorded) deps.logger.debug({ siteId, jobId: data.id, amountCents: recorded }, 'driver earning recorded');
  };
}

/** The site's mapping provider, as its ETAs and /gis use it; the offline estimate when its integration cannot make one. */
async function siteMapping(em: EntityManager, deps: EarningsDeps, siteId: string): Promise<MappingProvider> {
  try {
    return await mappingProviderForSite(em, deps.crypto, siteId, deps.mappingPolicy);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    deps.logger.warn({ err: error, siteId }, 'earning distance from the offline estimate: the site mapping integration is unusable');
    return OFFLINE;
  }
}

const alreadyEarned = async (em: EntityManager, jobId: string): Promise<boolean> => (await em.count(DriverEarningSchema, { jobId })) > 0;

/** Stores the job's earning from its measured inputs unless it exists or the site has no default rule; returns the amount, or null. */
export async function recordEarning(em: EntityManager, siteId: string, jobId: string, driverUserId: string, inputs: EarningInputs & { completedAt: Date }): Promise<number | null> {
  if (await alreadyEarned(em, jobId)) return null;
  const rule = await defaultEarningsRule(em);
  if (!rule) return null;
  const site = await em.findOneOrFail(SiteSchema, { id: siteId });
  const unitSystem = site.unitSystem === 'imperial' ? 'imperial' : 'metric';
  const { amountCents, breakdown } = computeEarning(
    { components: rule.components, minimumAmount: fromDecimal(rule.minimumAmount), maximumAmount: fromDecimal(rule.maximumAmount) },
    inputs,
    { unitSystem, currency: site.currency },
  );
  const earning = em.create(DriverEarningSchema, {
    id: newId('driverEarning'),
    siteId,
    driverUserId,
    jobId,
    earningsRuleId: rule.id,
    amountCents,
    tipAmountCents: 0,
    totalAmountCents: amountCents,
    currency: site.currency,
    componentBreakdown: breakdown,
    earnedAt: inputs.completedAt,
    jobActualPriceCents: inputs.priceCents,
    jobDistanceMeters: inputs.distanceMeters,
    jobDurationSeconds: inputs.durationSeconds,
    jobStopCount: inputs.stopCount,
  });
  recordAudit(em, SYSTEM, { siteId, action: 'create', entityType: 'DriverEarning', entityId: earning.id, before: null, after: { job_id: jobId, driver_user_id: driverUserId, amount_cents: amountCents, earnings_rule_id: rule.id } });
  await em.flush();
  return amountCents;
}
