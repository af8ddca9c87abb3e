import { Type } from 'typebox';
import { mappingProviderForSite } from '../../engine/mapping/site-provider.ts';
import { routeViews, type RouteView } from '../../engine/routes/route-detail.ts';
import { planRouteOrder, type RouteOrderPlan } from '../../engine/routes/route-optimize.ts';
import { loadRouteSnapshot } from '../../engine/routes/route-optimize-snapshot.ts';
import { updateRoute } from '../../engine/routes/route-service.ts';
import { defineOperation } from '../operation.ts';
import { DataResponse, Id, Nullable, Timestamp } from '../schemas/common.schema.ts';
import { RouteResponse } from '../schemas/route.schema.ts';
import { requireSite } from '../tenancy.ts';
import { commandContext } from './command-context.ts';
import { mappingPolicyOf } from '../../engine/eta/eta-check.ts';

/** Past this, one request holds a worker thread too long; bulk planning is the place for longer searches. */
const MAX_BUDGET_MS = 10_000;
const Iterations = Type.Integer({ minimum: 1, maximum: 100_000_000 });

const OptimizeRouteBody = Type.Object(
  {
    route_id: Id,
    optimize_for: Type.Optional(Type.Union([Type.Literal('time'), Type.Literal('distance')], { description: 'time (default): finish the last stop soonest; distance: shortest' })),
    time_budget_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: MAX_BUDGET_MS, description: 'search time, default 1000 (a relaxed pass adds up to half when windows cannot be met)' })),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1, description: 'default 1; same seed and iterations → same order' })),
    iterations: Type.Optional({ ...Iterations, description: "cap on the search's iterations: an earlier answer's `iterations` with its seed replays it" }),
    relaxed_iterations: Type.Optional({ ...Iterations, description: "the same for the relaxed pass (an earlier answer's `relaxed_iterations`)" }),
    apply: Type.Optional(Type.Boolean({ description: 'true (default): write the new order when it is better; false: only propose it' })),
  },
  { additionalProperties: false },
);

const Totals = Type.Object(
  {
    distance_meters: Type.Integer(),
    duration_seconds: Type.Integer(),
    travel_seconds: Type.Integer(),
    wait_seconds: Type.Integer(),
    late_stops: Type.Integer(),
    late_seconds: Type.Integer(),
  },
  { additionalProperties: false },
);

const OptimizeRouteResponse = Type.Object(
  {
    route: RouteResponse,
    applied: Type.Boolean({ description: 'the new order was written (apply, and improved)' }),
    improved: Type.Boolean(),
    stop_ids: Type.Array(Id, { description: 'the proposed full order (the current one when not improved)' }),
    before: Totals,
    after: Totals,
    schedule: Type.Array(
      Type.Object(
        { stop_id: Id, job_id: Id, arrival_at: Timestamp, service_start_at: Timestamp, departure_at: Timestamp, late_by_seconds: Type.Integer() },
        { additionalProperties: false },
      ),
    ),
    infeasible: Type.Array(
      Type.Object(
        { stop_id: Id, job_id: Id, reason: Type.String(), detail: Type.String(), late_by_seconds: Type.Integer() },
        { additionalProperties: false },
      ),
    ),
    iterations: Type.Integer(),
    relaxed_iterations: Nullable(Type.Integer()),
    seed: Type.Integer(),
    elapsed_ms: Type.Integer(),
    provider: Type.String(),
  },
  { additionalProperties: false },
);

export const routeOptimizeOperations = [
  defineOperation({
    id: 'route.optimize',
    method: 'POST',
    path: '/route/optimize',
    summary: "Reorder a route's open stops for the least time or distance",
    description:
      'Completed and cancelled stops keep their place at the front; a route in progress starts from its driver\'s last ' +
      'position (else from its first open stop). Each job keeps the order of its stops (pickups before dropoffs); ' +
      'complete_after/complete_before are time windows, service times come from the job\'s service type (default 300 s). ' +
      'Stops whose windows cannot be met stay on the route and are listed in `infeasible`. With apply (default), a ' +
      'better order is written like PUT /route stop_ids (same checks, audit, version, route:update).',
    tag: 'Routes',
    access: 'route.manage',
    host: 'site',
    body: OptimizeRouteBody,
    response: DataResponse(OptimizeRouteResponse),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      const site = requireSite(ctx.site);
      const { config, crypto, clock } = ctx.services;
      const policy = mappingPolicyOf(config);
      const body = ctx.body;
      // Read in one short transaction; the map and the search run after it, the write in a command of its own.
      const [snapshot, provider] = await ctx.transaction(async (em) => [
        await loadRouteSnapshot(em, site.id, body.route_id, clock.now(), site.timezone),
        await mappingProviderForSite(em, crypto, site.id, policy),
      ] as const);
      const seed = body.seed ?? 1;
      const plan = await planRouteOrder(snapshot, provider, {
        optimizeFor: body.optimize_for ?? 'time',
        timeBudgetMs: body.time_budget_ms ?? 1_000,
        seed,
        iterations: body.iterations,
        relaxedIterations: body.relaxed_iterations,
      });
      const apply = (body.apply ?? true) && plan.improved;
      const route = apply
        ? await ctx.services.engine.command(command, `route:${body.route_id}`, async (scope) => {
            // The version read with the stops: a route edited meanwhile answers 409 VERSION_CONFLICT, not a stale order.
            const record = await updateRoute(scope, { id: body.route_id, version: snapshot.route.version, stop_ids: plan.stopIds });
            return (await routeViews(scope.em, scope.siteId, [record]))[0]!;
          })
        : await ctx.transaction(async (em) => (await routeViews(em, site.id, [snapshot.route]))[0]!);
      return { data: toResponse(route, plan, apply, seed) };
    },
  }),
];

function toResponse(route: RouteView, plan: RouteOrderPlan, applied: boolean, seed: number) {
  const at = (seconds: number) => new Date(plan.departure.getTime() + Math.round(seconds) * 1000).toISOString();
  return {
    route,
    applied,
    improved: plan.improved,
    stop_ids: plan.stopIds,
    before: plan.before,
    after: plan.after,
    schedule: plan.schedule.map((s) => ({
      stop_id: s.stop.id,
      job_id: s.stop.job_id,
      arrival_at: at(s.arrival),
      service_start_at: at(s.serviceStart),
      departure_at: at(s.departure),
      late_by_seconds: Math.ceil(s.lateBy),
    })),
    infeasible: plan.infeasible,
    iterations: plan.iterations,
    relaxed_iterations: plan.relaxedIterations,
    seed,
    elapsed_ms: plan.elapsedMs,
    provider: plan.provider,
  };
}
