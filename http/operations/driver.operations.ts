import { driverLocation, isFromTheFuture } from '../../engine/drivers/driver-location.ts';
import { DomainError } from '../../engine/domain-error.ts';
import { setDriverAvailability } from '../../engine/drivers/driver-status.ts';
import { defineOperation } from '../operation.ts';
import { DataResponse } from '../schemas/common.schema.ts';
import { DriverLocationResponse, DriverStatusBody, DriverStatusResponse, LocationAck, LocationBody, LocationQuery } from '../schemas/driver.schema.ts';
import { commandContext } from './command-context.ts';

/** The caller's own user id: the driver endpoints act on the signed-in driver, never on an id from the body. */
function selfId(userId: string | null): string {
  if (!userId) throw new Error('a driver operation ran without a user');
  return userId;
}

export const driverOperations = [
  defineOperation({
    id: 'driver.status',
    method: 'PUT',
    path: '/driver/status',
    summary: "Set the calling driver's availability (offline, available, busy, on_break)",
    description:
      'Moves the driver availability machine: offline → available; available → offline, on_break or busy; on_break → available or offline; busy → available. ' +
      'Any other move is 409 INVALID_TRANSITION with the current availability and the allowed ones in details; asking for the current one changes nothing. ' +
      'Emits driver:status_change.',
    tag: 'Drivers',
    access: 'driver.self',
    host: 'site',
    body: DriverStatusBody,
    response: DataResponse(DriverStatusResponse),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      const userId = selfId(command.actor.userId);
      const data = await ctx.services.engine.command(command, `driver:${userId}`, (scope) => setDriverAvailability(scope, userId, ctx.body.availability));
      return { data };
    },
  }),
  defineOperation({
    id: 'driver.location.report',
    method: 'POST',
    path: '/driver/location',
    summary: "Report the calling driver's position (REST fallback of the realtime channel)",
    description:
      'Stored when newer than the last known fix; an older or duplicate fix is answered with accepted: false, reason: stale. ' +
      'recorded_at may be at most one minute ahead of the server clock (400 INVALID_RECORDED_AT). Positions are not audited.',
    tag: 'Drivers',
    access: 'driver.self',
    host: 'site',
    body: LocationBody,
    response: DataResponse(LocationAck),
    handler: async (ctx) => {
      const { siteId, actor } = commandContext(ctx);
      const userId = selfId(actor.userId);
      if (isFromTheFuture(ctx.body, ctx.services.clock.now())) {
        throw DomainError.invalid('INVALID_RECORDED_AT', 'recorded_at is more than a minute in the future', 'recorded_at');
      }
      // Through the location tracker like socket fixes: the same SQL (applyLocations), the configured track throttle,
      // and the tracker's listeners after commit (the dispatch room's live positions, ETA checks).
      const [verdict] = await ctx.services.locations.apply(siteId, userId, [ctx.body]);
      return { data: verdict?.accepted ? { accepted: true } : { accepted: false, reason: 'stale' as const } };
    },
  }),
  defineOperation({
    id: 'driver.location.get',
    method: 'GET',
    path: '/driver/location',
    summary: "A driver's last known position and availability (staff: any driver, user_id required; a driver: their own)",
    tag: 'Drivers',
    access: 'driver.location.read',
    host: 'site',
    query: LocationQuery,
    response: DataResponse(DriverLocationResponse),
    handler: async (ctx) => {
      const { siteId, actor } = commandContext(ctx);
      return { data: await ctx.transaction((em) => driverLocation(em, siteId, actor, ctx.query.user_id)) };
    },
  }),
];
