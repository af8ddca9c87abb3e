import type { Namespace, Socket } from 'socket.io';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { TSchema } from 'typebox';
import type { Services } from '../app/services.ts';
import { hasUsableTime, isFromTheFuture, type LocationPing } from '../engine/drivers/driver-location.ts';
import { ApiError, toApiError } from '../http/errors.ts';
import { describeErrors, validatorFor } from '../http/validation.ts';
import { LocationBatch, LocationFix, type DriverClientEvents, type DriverServerEvents, type ErrorReply, type SocketData } from './events.ts';
import { authenticateHandshake } from './handshake.ts';
import type { Presence } from './presence.ts';
import { driverRoom } from './rooms.ts';

export type DriverNamespace = Namespace<DriverClientEvents, DriverServerEvents, Record<string, never>, SocketData>;
type DriverSocket = Socket<DriverClientEvents, DriverServerEvents, Record<string, never>, SocketData>;

/**
 * `/driver`: a driver app streams `location` (one fix) and `locations` (an offline backlog, oldest first); each is
 * validated, counted against the driver's quota, applied through the location tracker (group commit, the same SQL
 * as REST) and acknowledged after commit with one verdict per fix. Anything wrong is an `{error, code}` ack (and,
 * for the quota, an `error` event too); nothing a client sends can throw out of a handler.
 */
export function serveDrivers(drivers: DriverNamespace, services: Services, presence: Presence): void {
  const quota = new RateLimiterMemory({ points: services.config.realtime.locationEventsPerSecond, duration: 1, keyPrefix: 'driver-location' });
  drivers.use(authenticateHandshake(services, 'driver.self'));
  drivers.on('connection', (socket: DriverSocket) => {
    const { siteId, userId } = socket.data;
    void socket.join(driverRoom(siteId, userId));
    presence.connected(siteId, userId);
    socket.on('disconnect', () => presence.disconnected(siteId, userId));

    const receive = async (payload: unknown, batch: boolean): Promise<{ data: unknown } | ErrorReply> => {
      try {
        await quota.consume(`${siteId}:${userId}`);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        const error = { error: 'Too many location events; slow down', code: 'RATE_LIMITED', details: { retry_after_ms: rejection.msBeforeNext } };
        socket.emit('error', error);
        return error;
      }
      const pings = parse(batch ? LocationBatch : LocationFix, payload);
      const now = services.clock.now();
      const late = pings.findIndex((ping) => !hasUsableTime(ping) || isFromTheFuture(ping, now));
      if (late >= 0) {
        const field = batch ? `${late}.recorded_at` : 'recorded_at';
        const message = hasUsableTime(pings[late]!) ? 'is more than a minute in the future' : 'is not a representable time';
        throw ApiError.badRequest('INVALID_RECORDED_AT', `recorded_at ${message}`, [{ field, message }]);
      }
      const verdicts = await services.locations.apply(siteId, userId, pings);
      return batch ? { data: { accepted: verdicts.filter((v) => v.accepted).length, results: verdicts } } : { data: verdicts[0]! };
    };

    const answer = (payload: unknown, ack: unknown, batch: boolean): void => {
      const reply = typeof ack === 'function' ? (ack as (body: unknown) => void) : () => {};
      receive(payload, batch).then(reply, (error: unknown) => {
        const api = toApiError(error);
        if (api.status >= 500) services.logger.error({ err: error, site: siteId, user: userId }, 'location event failed');
        reply(api.toBody());
      });
    };
    socket.on('location', (payload, ack) => answer(payload, ack, false));
    socket.on('locations', (payload, ack) => answer(payload, ack, true));
  });
}

/** @throws ApiError 400 VALIDATION_FAILED naming the fields, as REST does */
function parse(schema: TSchema, payload: unknown): LocationPing[] {
  const validator = validatorFor(schema);
  if (!validator.Check(payload)) throw ApiError.validation(describeErrors(validator, payload));
  return Array.isArray(payload) ? (payload as LocationPing[]) : [payload as LocationPing];
}
