import type { CommandContext } from '../../engine/engine.ts';
import type { JobActor } from '../../engine/jobs/job-input.ts';
import { routeViews } from '../../engine/routes/route-detail.ts';
import { completeOwnRoute, startOwnRoute } from '../../engine/routes/route-driver.ts';
import { findVisibleRoute } from '../../engine/routes/route-queries.ts';
import type { Services } from '../../app/services.ts';
import { defineOperation } from '../operation.ts';
import { DataResponse } from '../schemas/common.schema.ts';
import { RouteActionBody, RouteResponse } from '../schemas/route.schema.ts';
import { commandContext } from './command-context.ts';

/** Runs the driver's move on their route under its mailbox key, and answers the route as they see it after. */
async function act(services: Services, command: CommandContext & { actor: JobActor }, routeId: string, move: typeof startOwnRoute) {
  return services.engine.command(command, `route:${routeId}`, async (scope) => {
    await move(scope, routeId);
    const [view] = await routeViews(scope.em, scope.siteId, [await findVisibleRoute(scope.em, scope.siteId, command.actor, routeId)]);
    return { data: view! };
  });
}

export const driverRouteOperations = [
  defineOperation({
    id: 'driver.route.start',
    method: 'POST',
    path: '/driver/route/start',
    summary: "Start the calling driver's route (it becomes their active route)",
    description: "The route workflow decides (409 INVALID_TRANSITION otherwise, e.g. a route not yet dispatched); another driver's route is 404.",
    tag: 'Drivers',
    access: 'driver.self',
    host: 'site',
    body: RouteActionBody,
    response: DataResponse(RouteResponse),
    handler: async (ctx) => act(ctx.services, commandContext(ctx), ctx.body.route_id, startOwnRoute),
  }),
  defineOperation({
    id: 'driver.route.complete',
    method: 'POST',
    path: '/driver/route/complete',
    summary: "Complete the calling driver's route once none of its jobs is open",
    description:
      '409 ROUTE_HAS_OPEN_JOBS (open_job_ids in details) while a job is open. A route also completes by itself when its last open job ends.',
    tag: 'Drivers',
    access: 'driver.self',
    host: 'site',
    body: RouteActionBody,
    response: DataResponse(RouteResponse),
    handler: async (ctx) => act(ctx.services, commandContext(ctx), ctx.body.route_id, completeOwnRoute),
  }),
];
