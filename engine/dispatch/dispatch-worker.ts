import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Engine } from '../engine.ts';
import type { DurableQueue } from '../queue/durable-queue.ts';
import { createAutoDispatcher } from './auto-dispatch.ts';
import { dispatchDeps } from './dispatch-deps.ts';
import { createDueDispatchHandler, DISPATCH_QUEUE } from './scheduled-dispatch.ts';

export type DispatchWorker = { stop(): Promise<void> };

/**
 * Starts dispatch's background work in this process: the consumer of due (scheduled) dispatches and the auto
 * dispatcher, kicked after every command commit, whose passes also add again the due jobs Redis may have lost. Any
 * number of processes may run it.
 */
export async function startDispatchWorker(services: {
  engine: Engine;
  queue: DurableQueue;
  db: { orm: MikroORM };
  logger: Logger;
  clock: Clock;
  config: { requeueGraceSeconds: number };
}): Promise<DispatchWorker> {
  const deps = dispatchDeps(services);
  await services.queue.process(DISPATCH_QUEUE, createDueDispatchHandler(deps, services.logger), { concurrency: 4, lockMs: 30_000 });
  const auto = createAutoDispatcher({ ...deps, orm: services.db.orm, logger: services.logger, clock: services.clock, requeueGraceMs: services.config.requeueGraceSeconds * 1000 });
  services.engine.onCommit(() => auto.trigger());
  auto.trigger();
  return { stop: () => auto.stop() };
}
