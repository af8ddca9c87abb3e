import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { EtaNotificationConfigSchema } from '../../persistence/entities/eta-notification-config.entity.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import type { Clock } from '../clock.ts';
import { siteTimezone } from '../dispatch/decide.ts';
import type { MappingNetworkPolicy } from '../mapping/network-policy.ts';
import { mappingProviderForSite } from '../mapping/site-provider.ts';
import type { JobHandler, JsonValue } from '../queue/durable-queue.ts';
import { loadEtaDriver } from './eta-driver.ts';
import { driverItinerary } from './eta-itinerary.ts';
import { sendDueNotifications, type SentSummary } from './eta-triggers.ts';
import { estimateStops } from './stop-eta.ts';

/** The durable queue of ETA checks: one job per driver per throttle window (see `eta-trigger.ts`). */
export const ETA_QUEUE = 'eta';

export type EtaCheckDeps = {
  orm: MikroORM;
  crypto: FieldCrypto;
  clock: Clock;
  logger: Logger;
  /** Where the sites' mapping engines may live (the operator's configuration). */
  mappingPolicy: MappingNetworkPolicy;
};

/**
 * Recomputes one driver's ETAs from their current position (read now, so a check always uses the newest fix) and
 * sends the notifications they make due, in one transaction. Checks of one driver take turns (a transaction-scoped
 * advisory lock), so two processes never both decide the same notification is due. Nothing to do without an
 * enabled config, a position or an open stop.
 * @returns what was sent
 */
export async function checkDriverEtas(deps: EtaCheckDeps, siteId: string, driverUserId: string): Promise<SentSummary[]> {
  return inTenantScope(deps.orm, { siteId }, async (em) => {
    await em.execute('select pg_advisory_xact_lock(hashtext(?))', [`eta-check:${siteId}:${driverUserId}`]);
    const configs = await em.find(EtaNotificationConfigSchema, { enabled: true }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    if (configs.length === 0) return [];
    const driver = await loadEtaDriver(em, siteId, driverUserId);
    if (!driver?.position) return [];
    const itinerary = await driverItinerary(em, siteId, driverUserId);
    if (itinerary.length === 0) return [];
    const now = deps.clock.now();
    const mapping = await mappingProviderForSite(em, deps.crypto, siteId, deps.mappingPolicy);
    const estimates = await estimateStops(mapping, driver.position, driver.mode, itinerary, now);
    const timezone = await siteTimezone(em, siteId);
    return sendDueNotifications(em, { siteId, driver: { userId: driver.userId, name: driver.name }, timezone, now }, configs, estimates);
  });
}

/** The mapping network policy from the operator's configuration (as the GIS endpoints read it). */
export function mappingPolicyOf(config: { webhookAllowLoopback: boolean; mappingAllowPrivateNetworks: boolean }): MappingNetworkPolicy {
  return { allowLoopback: config.webhookAllowLoopback, allowPrivateNetworks: config.mappingAllowPrivateNetworks };
}

type CheckJob = { site_id: string; driver_user_id: string };

/** The queue handler: a failed check (a mapping engine down) is retried by the queue; a repeat sends nothing twice. */
export function createEtaCheckHandler(deps: EtaCheckDeps): JobHandler {
  return async (job) => {
    const data = readCheckJob(job.data);
    const sent = await checkDriverEtas(deps, data.site_id, data.driver_user_id);
    if (sent.length > 0) deps.logger.info({ site: data.site_id, driver: data.driver_user_id, sent: sent.length }, 'eta notifications sent');
  };
}

function readCheckJob(data: JsonValue): CheckJob {
  const value = data as Partial<CheckJob> | null;
  if (!value || typeof value.site_id !== 'string' || typeof value.driver_user_id !== 'string') throw new Error('an eta check job needs site_id and driver_user_id');
  return { site_id: value.site_id, driver_user_id: value.driver_user_id };
}
