import type { Namespace } from 'socket.io';
import type { Services } from '../app/services.ts';
import { driverStatus, setDriverAvailability } from '../engine/drivers/driver-status.ts';
import type { JsonValue } from '../engine/queue/durable-queue.ts';
import { driverRoom } from './rooms.ts';

/** The durable queue of disconnect grace periods: a job per disconnect, due when its grace runs out. */
export const PRESENCE_QUEUE = 'driver-presence';

export type Presence = {
  /** Starts this process's consumer of due grace periods (every process serving `/driver` runs one). */
  start(): Promise<void>;
  connected(siteId: string, userId: string): void;
  disconnected(siteId: string, userId: string): void;
  close(): void;
};

type GraceEnded = { siteId: string; userId: string; disconnectedAt: number };

/**
 * A driver whose app lost its connection goes offline after a grace period (a tunnel, a phone switching cells),
 * unless a socket of theirs is back by then on any process (`fetchSockets` asks every process through the
 * adapter). A busy driver stays busy: the availability machine never drops work in hand, and the office sees the
 * stale position instead. The move goes through the command path like PUT /driver/status (audit + outbox).
 *
 * The grace period is a delayed job in the durable queue, not a timer in memory: a server restarted (or replaced)
 * while a driver's grace runs still takes that driver offline when it ends, from whichever process runs the job.
 * A driver who disconnects again before an earlier grace ended is judged by the later one (this process remembers
 * each driver's last disconnect; a job run elsewhere judges by the sockets alone).
 */
export function createPresence(services: Services, drivers: Namespace): Presence {
  const lastDisconnect = new Map<string, number>();
  let closed = false;
  const graceMs = services.config.realtime.disconnectGraceSeconds * 1000;

  async function graceEnded({ siteId, userId, disconnectedAt }: GraceEnded): Promise<void> {
    const key = driverRoom(siteId, userId);
    const latest = lastDisconnect.get(key);
    if (latest !== undefined && latest > disconnectedAt) return;
    if (latest === disconnectedAt) lastDisconnect.delete(key);
    const sockets = await drivers.in(key).fetchSockets();
    if (sockets.length > 0) return;
    const ctx = { siteId, actor: { userId: null, applicationId: null, requestId: 'socket-disconnect', role: 'system' as const } };
    await services.engine.command(ctx, `driver:${userId}`, async (scope) => {
      const { availability } = await driverStatus(scope.em, siteId, userId);
      if (availability === 'available' || availability === 'on_break') await setDriverAvailability(scope, userId, 'offline');
    });
  }

  return {
    start: () => services.queue.process(PRESENCE_QUEUE, (job) => graceEnded(job.data as GraceEnded), { concurrency: 4 }),
    connected(siteId, userId) {
      lastDisconnect.delete(driverRoom(siteId, userId));
    },
    disconnected(siteId, userId) {
      // Sockets closed by our own shutdown are not drivers leaving: their apps reconnect to another process.
      if (closed) return;
      const disconnectedAt = Date.now();
      lastDisconnect.set(driverRoom(siteId, userId), disconnectedAt);
      const data: JsonValue = { siteId, userId, disconnectedAt };
      services.queue
        .add(PRESENCE_QUEUE, 'grace-ended', data, { jobId: `presence.${siteId}.${userId}.${disconnectedAt}`, delayMs: graceMs, attempts: 5, backoffMs: 1000 })
        .catch((error: unknown) => services.logger.error({ err: error, site: siteId, user: userId }, 'disconnect grace: could not queue'));
    },
    close() {
      closed = true;
      lastDisconnect.clear();
    },
  };
}
