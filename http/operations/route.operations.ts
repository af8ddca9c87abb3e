import { Type } from 'typebox';
import { routeViews } from '../../engine/routes/route-detail.ts';
import { readVisibleRoute, ROUTE_SORTABLE, searchRouteViews } from '../../engine/routes/route-queries.ts';
import { createRoute, updateRoute } from '../../engine/routes/route-service.ts';
import { moveRouteByStaff } from '../../engine/routes/route-staff-move.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import { CreateRouteBody, RouteResponse, RouteSearchFilters, RouteStateBody, UpdateRouteBody } from '../schemas/route.schema.ts';
import { commandContext, siteReads } from './command-context.ts';

const SearchQuery = Type.Object({ ...RouteSearchFilters, ...pagingQuery(ROUTE_SORTABLE) }, { additionalProperties: false });

export const routeOperations = [
  defineOperation({
    id: 'route.create',
    method: 'POST',
    path: '/route',
    summary: 'Plan a route: a service day, optionally its driver, vehicle, team and first jobs (in order)',
    description: 'The route starts in its workflow\'s initial state (planned). A job on another route moves to this one.',
    tag: 'Routes',
    access: 'route.manage',
    host: 'site',
    body: CreateRouteBody,
    status: 201,
    response: DataResponse(RouteResponse),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      return ctx.services.engine.command(command, `route:create:${ctx.requestId}`, async (scope) => {
        const route = await createRoute(scope, ctx.body);
        const [view] = await routeViews(scope.em, scope.siteId, [route]);
        return { data: view! };
      });
    },
  }),
  defineOperation({
    id: 'route.get',
    method: 'GET',
    path: '/route',
    summary: 'Get a route with its jobs and stops in order',
    description: 'A driver reads only the routes they drive (another route is 404).',
    tag: 'Routes',
    access: 'route.read',
    host: 'site',
    query: IdQuery,
    response: DataResponse(RouteResponse),
    handler: async (ctx) => {
      return { data: await readVisibleRoute(...siteReads(ctx), ctx.query.id) };
    },
  }),
  defineOperation({
    id: 'route.update',
    method: 'PUT',
    path: '/route',
    summary: 'Edit a route: rename, change driver, vehicle or team, move jobs in or out, reorder its stops',
    description:
      'Supplied fields change, null clears, absent keeps. remove_job_ids leave first, then add_job_ids join (appended), ' +
      'then stop_ids sets the full order: every stop of the route once, each job\'s pickups before its dropoffs ' +
      '(400 PICKUP_AFTER_DROPOFF naming the stop). Completed or cancelled routes and jobs do not change (409).',
    tag: 'Routes',
    access: 'route.manage',
    host: 'site',
    body: UpdateRouteBody,
    response: DataResponse(RouteResponse),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      return ctx.services.engine.command(command, `route:${ctx.body.id}`, async (scope) => {
        const route = await updateRoute(scope, ctx.body);
        const [view] = await routeViews(scope.em, scope.siteId, [route]);
        return { data: view! };
      });
    },
  }),
  defineOperation({
    id: 'route.state',
    method: 'POST',
    path: '/route/state',
    summary: "Move a route to a state of its workflow: cancel it (its open jobs are released), complete an emptied one, or take one back to planned",
    description:
      'Completing needs no open jobs (409 ROUTE_HAS_OPEN_JOBS), back to planned no dispatched ones (409 ROUTE_HAS_DISPATCHED_JOBS); a route is ' +
      'dispatched with POST /dispatch/route (409 DISPATCH_THE_ROUTE). A move the workflow does not allow is 409 INVALID_TRANSITION.',
    tag: 'Routes',
    access: 'route.manage',
    host: 'site',
    body: RouteStateBody,
    response: DataResponse(RouteResponse),
    handler: async (ctx) => {
      const { route_id: id, workflow_state_id: toStateId, cancellation_notes: notes } = ctx.body;
      await ctx.services.engine.command(commandContext(ctx), `route:${id}`, (scope) => moveRouteByStaff(scope, id, toStateId, notes === undefined ? {} : { cancellationNotes: notes }));
      return { data: await readVisibleRoute(...siteReads(ctx), id) };
    },
  }),
  defineOperation({
    id: 'route.search',
    method: 'GET',
    path: '/route/search',
    summary: "Search this site's routes (a driver: their own)",
    description: 'Filters combine; service_date_from and service_date_to are inclusive.',
    tag: 'Routes',
    access: 'route.read',
    host: 'site',
    query: SearchQuery,
    response: SearchResponse(RouteResponse),
    handler: async (ctx) => {
      const paging = readPaging(ctx.query, ROUTE_SORTABLE, '-service_date');
      const [views, total] = await searchRouteViews(...siteReads(ctx), ctx.query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy });
      return searchBody(views, total, paging);
    },
  }),
];
