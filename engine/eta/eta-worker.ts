import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { LocationTracker } from '../drivers/driver-track-batcher.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import type { Clock } from '../clock.ts';
import type { DurableQueue } from '../queue/durable-queue.ts';
import { createEtaCheckHandler, ETA_QUEUE, mappingPolicyOf } from './eta-check.ts';
import { createEtaTrigger } from './eta-trigger.ts';

type EtaServices = {
  config: { webhookAllowLoopback: boolean; mappingAllowPrivateNetworks: boolean };
  db: { orm: MikroORM };
  queue: DurableQueue;
  clock: Clock;
  logger: Logger;
  crypto: FieldCrypto;
  locations: LocationTracker;
};

/**
 * Starts ETA notifications in this process: every committed batch of positions (sockets and REST alike go through
 * the location tracker) queues throttled checks of the moved drivers, and this process consumes the check queue.
 * Any number of processes may run it.
 */
export async function startEtaWorker(services: EtaServices): Promise<void> {
  const deps = { orm: services.db.orm, clock: services.clock, logger: services.logger };
  const trigger = createEtaTrigger({ ...deps, queue: services.queue });
  services.locations.onApplied((siteId, applied) => {
    trigger.driversMoved(siteId, applied.map((fix) => fix.userId)).catch((error: unknown) => services.logger.error({ err: error, site: siteId }, 'eta trigger failed'));
  });
  await services.queue.process(ETA_QUEUE, createEtaCheckHandler({ ...deps, crypto: services.crypto, mappingPolicy: mappingPolicyOf(services.config) }), { concurrency: 2 });
}
