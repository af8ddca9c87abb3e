import { toPlanRouteInput, toSequenceInput } from '../../engine/mapping/gis-input.ts';
import { planRoute } from '../../engine/mapping/gis-route.ts';
import { sequenceRoute } from '../../engine/mapping/gis-sequence.ts';
import { defineOperation } from '../operation.ts';
import { DataResponse } from '../schemas/common.schema.ts';
import { RouteRequestBody, RouteResponse, SequenceRequestBody, SequenceResponse, toRouteResponse, toSequenceResponse } from '../schemas/gis.schema.ts';
import { siteMappingProvider } from '../site-mapping.ts';
import { requireSite } from '../tenancy.ts';

const FAILURES =
  'A routing engine that fails, answers garbage or does not answer within its timeout gives 502 MAPPING_PROVIDER_ERROR with the reason (or the offline estimate, when the integration sets fallback: offline).';

export const gisOperations = [
  defineOperation({
    id: 'gis.route',
    method: 'POST',
    path: '/gis/route',
    summary: 'Route from an origin to a destination through waypoints',
    description: `Distance, travel time, legs between stops, clock times with stop durations and an encoded polyline, from the site's mapping provider. ${FAILURES}`,
    tag: 'Routing',
    access: 'gis.use',
    host: 'site',
    body: RouteRequestBody,
    response: DataResponse(RouteResponse),
    handler: async (ctx) => {
      const input = toPlanRouteInput(ctx.body, ctx.services.clock.now());
      return { data: toRouteResponse(await planRoute(await siteMappingProvider(ctx), input)) };
    },
  }),
  defineOperation({
    id: 'gis.sequence',
    method: 'POST',
    path: '/gis/sequence',
    summary: 'Best visiting order of one vehicle’s waypoints, with service times and access windows',
    description: `Orders the waypoints from start to end and schedules them; a waypoint whose access windows cannot be met is kept, marked feasible: false with late_by_seconds. ${FAILURES}`,
    tag: 'Routing',
    access: 'gis.use',
    host: 'site',
    body: SequenceRequestBody,
    response: DataResponse(SequenceResponse),
    handler: async (ctx) => {
      const input = toSequenceInput(ctx.body, ctx.services.clock.now(), requireSite(ctx.site).timezone);
      return { data: toSequenceResponse(await sequenceRoute(await siteMappingProvider(ctx), input)) };
    },
  }),
];
