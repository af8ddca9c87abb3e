import type { Engine } from '../engine.ts';
import type { MappingProvider } from '../mapping/mapping-provider.ts';
import { createMappingProvider } from '../mapping/create-mapping-provider.ts';
import type { DurableQueue } from '../queue/durable-queue.ts';

/** What dispatch needs from the app: the command path, the durable queue (delayed dispatch) and the map. */
export type DispatchDeps = {
  engine: Engine;
  queue: DurableQueue;
  /** The site's mapping provider (the offline one until sites connect a road engine). */
  mappingFor(siteId: string): MappingProvider;
};

const offline = createMappingProvider(null);

/** Dispatch deps from the app's services; every site gets the offline provider for now. */
export function dispatchDeps(services: { engine: Engine; queue: DurableQueue }): DispatchDeps {
  return { engine: services.engine, queue: services.queue, mappingFor: () => offline };
}
