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
import type { JobHandler } from '../queue/durable-queue.ts';
import { computeEarning } from './compute-earning.ts';
import { isPayableCompletion } from './payable-completion.ts';
import { defaultEarningsRule, fromDecimal } from './earnings-rule.service.ts';
import { jobEarningInputs } from './job-earning-inputs.ts';

const SYSTEM = { userId: null, applicationId: null, requestId: null };
const OFFLINE = createMappingProvider(null);

type StateChange = { site_id: string; data: unknown };

/**
 * The earnings consumer of the outbox events: when a job reaches the completed phase with a driver, that driver's
 * earning is computed with the site's default rule and stored, once (the job id is unique per site, and a repeated
 * event finds the earning already there). A site without a default rule records nothing: pay is opt-in.
 */
export function createEarningsConsumer(deps: { orm: MikroORM; logger: Logger; crypto: FieldCrypto; mappingPolicy: MappingNetworkPolicy }): JobHandler {
  return async (job) => {
    const { site_id: siteId, data } = job.data as StateChange;
    if (!isPayableCompletion(job.name, data)) return;
    const recorded = await inTenantScope(deps.orm, { siteId }, async (em) => {
      // The distance paid is the one the site's routing shows (its mapping integration), as ETAs and /gis use.
      const mapping = await mappingProviderForSite(em, deps.crypto, siteId, deps.mappingPolicy);
      return recordEarning(em, siteId, data.id, data.driver_user_id, mapping, deps.logger);
    });
    if (recorded) deps.logger.debug({ siteId, jobId: data.id, amountCents: recorded }, 'driver earning recorded');
  };
}

/** Stores the job's earning unless it exists or the site has no default rule; returns the amount, or null. */
export async function recordEarning(em: EntityManager, siteId: string, jobId: string, driverUserId: string, mapping: MappingProvider, logger: Logger): Promise<number | null> {
  if ((await em.count(DriverEarningSchema, { jobId })) > 0) return null;
  const rule = await defaultEarningsRule(em);
  if (!rule) return null;
  const site = await em.findOneOrFail(SiteSchema, { id: siteId });
  const inputs = await jobEarningInputs(em, mapping, jobId).catch((error: unknown) => {
    // A routing engine down must not cost the driver their earning: the offline estimate stands in (its distance is
    // in the record, job_distance_meters), and the log says so.
    if (mapping === OFFLINE) throw error;
    logger.warn({ err: error, siteId, jobId }, 'earning distance from the offline estimate: the site mapping provider failed');
    return jobEarningInputs(em, OFFLINE, jobId);
  });
  const unitSystem = site.unitSystem === 'imperial' ? 'imperial' : 'metric';
  const { amountCents, breakdown } = computeEarning(
    { components: rule.components, minimumAmount: fromDecimal(rule.minimumAmount), maximumAmount: fromDecimal(rule.maximumAmount) },
    inputs,
    unitSystem,
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
