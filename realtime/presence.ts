import type { Namespace } from 'socket.io';
import type { Services } from '../app/services.ts';
import { driverStatus, setDriverAvailability } from '../engine/drivers/driver-status.ts';
import { driverRoom } from './rooms.ts';

export type Presence = {
  connected(siteId: string, userId: string): void;
  disconnected(siteId: string, userId: string): void;
  close(): void;
};

/**
 * A driver whose app lost its connection goes offline after a grace period (a tunnel, a phone switching cells),
 * unless a socket of theirs is back by then on any process (`fetchSockets` asks every process through the
 * adapter). A busy driver stays busy: the availability machine never drops work in hand, and the office sees the
 * stale position instead. The move goes through the command path like PUT /driver/status (audit + outbox).
 */
export function createPresence(services: Services, drivers: Namespace): Presence {
  const timers = new Map<string, NodeJS.Timeout>();
  let closed = false;
  const graceMs = services.config.realtime.disconnectGraceSeconds * 1000;

  async function expire(siteId: string, userId: string): Promise<void> {
    const sockets = await drivers.in(driverRoom(siteId, userId)).fetchSockets();
    if (sockets.length > 0) return;
    const ctx = { siteId, actor: { userId: null, applicationId: null, requestId: 'socket-disconnect', role: 'system' as const } };
    await services.engine.command(ctx, `driver:${userId}`, async (scope) => {
      const { availability } = await driverStatus(scope.em, siteId, userId);
      if (availability === 'available' || availability === 'on_break') await setDriverAvailability(scope, userId, 'offline');
    });
  }

  return {
    connected(siteId, userId) {
      const key = driverRoom(siteId, userId);
      clearTimeout(timers.get(key));
      timers.delete(key);
    },
    disconnected(siteId, userId) {
      // Sockets closed by our own shutdown are not drivers leaving: their apps reconnect to another process.
      if (closed) return;
      const key = driverRoom(siteId, userId);
      clearTimeout(timers.get(key));
      const timer = setTimeout(() => {
        timers.delete(key);
        expire(siteId, userId).catch((error: unknown) => services.logger.error({ err: error, site: siteId, user: userId }, 'disconnect grace: going offline failed'));
      }, graceMs);
      timer.unref();
      timers.set(key, timer);
    },
    close() {
      closed = true;
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}
