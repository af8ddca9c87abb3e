import type { MikroORM } from '@mikro-orm/postgresql';
import type { DispatchDeps } from '../../engine/dispatch/dispatch-deps.ts';
import { dispatchByStrategy } from '../../engine/dispatch/strategy-dispatch.ts';
import type { CommandContext, Engine } from '../../engine/engine.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { makeJobs, seedDrivers } from './dispatch-fleet.ts';
import type { EngineSite } from './engine-seed.ts';

/** Drivers of the history's own team (none of them in the timed series' team): about one route each, as in the series. */
const HISTORY_DRIVERS = 1000;

/**
 * A site that has been dispatching for a while: `jobs` jobs created and dispatched through the command path to a
 * team of its own (so the timed team's drivers, loads and decisions are as without it), then the tables the
 * dispatch statements read and write analyzed. Without it the bench starts on empty job, route and dispatch tables,
 * and PostgreSQL builds each connection's generic plan of the dispatch statements during the warm-up on tables of a
 * few rows: a sequential scan, or a walk of the site's index, is then the cheapest plan, and it stays the plan while
 * the tables grow through the series (in production an autoanalyze invalidates such plans within a minute; a
 * series lasts seconds). The history also runs the command path a few thousand times before the series, as a
 * server that has been up for a while has.
 */
export async function seedDispatchHistory(orm: MikroORM, engine: Engine, deps: DispatchDeps, ctx: CommandContext, site: EngineSite, jobs: number): Promise<void> {
  // Labelled by site: bench:dispatch seeds one site per fleet size in one database, and team and user ids are global.
  const teamId = await seedDrivers(orm, site, HISTORY_DRIVERS, `history_${site.siteId}`);
  for (const jobId of await makeJobs(engine, ctx, site, jobs)) {
    await engine.command(ctx, `job:${jobId}`, (scope) => dispatchByStrategy(deps, scope, { jobId, strategy: 'eta', method: 'team', teamId, requireConfirmation: false }));
  }
  await analyzeDispatchTables(orm);
}

/** Statistics of the tables a dispatch's statements read and write. */
export async function analyzeDispatchTables(orm: MikroORM): Promise<void> {
  await inTenantScope(orm, { siteId: null, platform: true }, (em) => em.execute('analyze job, stop, address, route, route_stop, dispatch, audit_record, outbox, outbox_pending'));
}
