import type { Namespace, Socket } from 'socket.io';
import type { Services } from '../app/services.ts';
import type { LocationPing, LocationVerdict } from '../engine/drivers/driver-location.ts';
import { ApiError, toApiError } from '../http/errors.ts';
import type { DriverClientEvents, DriverServerEvents, ErrorReply, LocationReply, SocketData } from './events.ts';
import { parseLocationBatch, parseLocationFix } from './fix-validation.ts';
import { authenticateHandshake } from './handshake.ts';
import { createLocationQuota } from './location-quota.ts';
import type { Presence } from './presence.ts';
import type { SocketCredentials } from './socket-credentials.ts';
import { driverRoom } from './rooms.ts';
import { keepMessageStateYoung } from './young-socket-state.ts';

export type DriverNamespace = Namespace<DriverClientEvents, DriverServerEvents, Record<string, never>, SocketData>;
type DriverSocket = Socket<DriverClientEvents, DriverServerEvents, Record<string, never>, SocketData>;

/**
 * `/driver`: a driver app streams `location` (one fix) and `locations` (an offline backlog, oldest first); each is
 * validated, counted against the driver's quota, applied through the location tracker (group commit, the same SQL
 * as REST) and acknowledged after commit with one verdict per fix. Anything wrong is an `{error, code}` ack (and,
 * for the quota, an `error` event too); nothing a client sends can throw out of a handler.
 */
export function serveDrivers(drivers: DriverNamespace, services: Services, presence: Presence, credentials: SocketCredentials): void {
  const quota = createLocationQuota(services.config.realtime.locationEventsPerSecond);
  drivers.use(authenticateHandshake(services, 'driver.self', credentials));
  drivers.on('connection', (socket: DriverSocket) => {
    const { siteId, userId } = socket.data;
    const quotaKey = `${siteId}:${userId}`;
    void socket.join(driverRoom(siteId, userId));
    credentials.watch(socket);
    // A driver app sends a fix a second: see young-socket-state.ts for what that does to the scavenger.
    keepMessageStateYoung(socket);
    presence.connected(siteId, userId);
    socket.on('disconnect', () => presence.disconnected(siteId, userId));

    const failed = (reply: Reply, error: unknown): void => {
      const api = toApiError(error);
      if (api.status >= 500) services.logger.error({ err: error, site: siteId, user: userId }, 'location event failed');
      reply(api.toBody());
    };

    // Synchronous up to the tracker (quota, validation), and no promise per event: the tracker calls back. A fix dated
    // too far ahead or at no usable time is refused by the tracker (400 INVALID_RECORDED_AT, as REST answers it).
    const answer = (payload: unknown, ack: unknown, batch: boolean): void => {
      const reply: Reply = typeof ack === 'function' ? (ack as Reply) : ignore;
      const retryAfterMs = quota.take(quotaKey);
      if (retryAfterMs !== null) {
        const error: ErrorReply = new ApiError(429, 'RATE_LIMITED', 'Too many location events; slow down', { data: { retry_after_ms: retryAfterMs } }).toBody();
        socket.emit('error', error);
        reply(error);
        return;
      }
      let pings: LocationPing[];
      try {
        pings = batch ? parseLocationBatch(payload) : parseLocationFix(payload);
      } catch (error) {
        failed(reply, error);
        return;
      }
      services.locations.submit(siteId, userId, pings, batch, (error, verdicts) => {
        if (error) failed(reply, error);
        else reply(batch ? { data: { accepted: verdicts.filter((v) => v.accepted).length, results: verdicts } } : replyTo(verdicts[0]!));
      });
    };
    socket.on('location', (payload, ack) => answer(payload, ack, false));
    socket.on('locations', (payload, ack) => answer(payload, ack, true));
  });
}

type Reply = (body: unknown) => void;
const ignore: Reply = () => {};

/**
 * The acknowledgement of one `location`, shared and frozen: one of three answers, so no object per acknowledgement
 * (socket.io only reads it: it serialises it into the ack packet).
 */
const REPLIES = {
  accepted: Object.freeze({ data: Object.freeze({ accepted: true }) }),
  stale: Object.freeze({ data: Object.freeze({ accepted: false, reason: 'stale' }) }),
  duplicate: Object.freeze({ data: Object.freeze({ accepted: false, reason: 'duplicate' }) }),
} as const satisfies Record<string, LocationReply>;

const replyTo = (verdict: LocationVerdict): LocationReply => (verdict.accepted ? REPLIES.accepted : REPLIES[verdict.reason]);
