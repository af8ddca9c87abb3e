import pLimit from 'p-limit';
import type { Socket } from 'socket.io';
import type { Services } from '../app/services.ts';
import { authenticate, type Credential } from '../http/auth/authenticate.ts';
import type { Principal } from '../http/auth/principal.ts';
import { ApiError, toApiError } from '../http/errors.ts';
import { isAllowed, type Access } from '../http/permissions.ts';
import type { SocketData } from './events.ts';

/** What the handshake accepted, kept in this process only (never in `socket.data`, which the adapter shares). */
type Admission = { credential: Credential; access: Access; siteId: string; userId: string; expiresAt: number | null; clears: number };

/** How often sockets that send nothing (a dispatcher's) are checked for an expired access token. */
const EXPIRY_SWEEP_MS = 10_000;
/** Credentials re-checked at once after a revocation: a burst must not take every database connection. */
const RECHECK_CONCURRENCY = 8;

export type SocketCredentials = {
  /** How many clears this process has seen: the handshake reads it before it authenticates. */
  clears(): number;
  /**
   * Called by the handshake once `principal` was accepted for `access`; `clearsBefore` is what `clears()` said
   * before authenticating: a revocation that landed meanwhile has the socket re-checked as soon as it connects.
   */
  admit(socket: Socket, credential: Credential, principal: Principal, access: Access, clearsBefore: number): void;
  /** Called on connection: the socket is checked until it closes. */
  watch(socket: Socket): void;
  close(): void;
};

/**
 * A socket's credential stays valid for as long as the socket is open, as REST checks it on every request. An
 * access token that expires, an API key or session revoked, a user deactivated or given a role the namespace
 * refuses, its site deactivated: the socket receives an `error` event `{error, code}` and is disconnected, and an event it sent meanwhile
 * is answered with that error. An access token's expiry is checked on every event its socket sends and every 10 s
 * for the silent ones (an API key has none);
 * anything else that can withdraw a credential clears the credential cache (in every process, through Redis), and
 * that re-checks every socket of this process against the database, 8 at a time, each socket queued at most once
 * however many clears arrive (a clear does not say what it withdrew, so every socket is suspect).
 */
export function createSocketCredentials(services: Services): SocketCredentials {
  const admissions = new WeakMap<Socket, Admission>();
  const watched = new Set<Socket>();
  /** Sockets with a re-check queued: repeated clears (a fleet signing out) queue each socket once, not once per clear. */
  const queued = new Set<Socket>();
  let clears = 0;
  const limit = pLimit(RECHECK_CONCURRENCY);
  let closed = false;

  const expired = (admission: Admission): boolean => admission.expiresAt !== null && admission.expiresAt <= services.clock.now().getTime();

  const recheck = async (socket: Socket): Promise<void> => {
    queued.delete(socket);
    const admission = admissions.get(socket);
    if (!admission || !socket.connected) return;
    try {
      // The site first, as REST resolves it per request: a deactivated site's sockets end (403 SITE_INACTIVE).
      await services.sites.resolve((socket.data as SocketData).subdomain);
      const deps = { orm: services.db.orm, credentials: services.credentials };
      const principal = await authenticate(deps, admission.credential, admission.siteId, services.clock.now().getTime());
      if (principal.userId !== admission.userId) throw ApiError.unauthorized('INVALID_CREDENTIALS', 'The credential no longer names this user');
      if (!isAllowed(admission.access, principal.role)) throw ApiError.forbidden(admission.access, principal.role);
      admission.expiresAt = principal.expiresAt;
    } catch (error) {
      // Only a refusal of the credential ends the socket; a database hiccup is tried again at the next clear.
      if (toApiError(error).status < 500) refuse(socket, error);
      else services.logger.warn({ err: error, site: admission.siteId }, 'socket credential re-check failed');
    }
  };

  const queueRecheck = (socket: Socket): void => {
    if (queued.has(socket)) return;
    queued.add(socket);
    void limit(() => recheck(socket));
  };

  services.credentials.onClear(() => {
    clears += 1;
    if (closed) return;
    for (const socket of watched) queueRecheck(socket);
  });

  const sweep = setInterval(() => {
    for (const socket of watched) {
      const admission = admissions.get(socket);
      if (admission && expired(admission)) refuse(socket, tokenExpired());
    }
  }, EXPIRY_SWEEP_MS);
  sweep.unref();

  return {
    clears: () => clears,
    admit(socket, credential, principal, access, clearsBefore) {
      admissions.set(socket, { credential, access, siteId: principal.siteId ?? '', userId: principal.userId, expiresAt: principal.expiresAt, clears: clearsBefore });
    },
    watch(socket) {
      watched.add(socket);
      socket.on('disconnect', () => {
        watched.delete(socket);
        queued.delete(socket);
      });
      // A revocation between the handshake's authentication and now found no socket to re-check: do it now.
      const admission = admissions.get(socket);
      if ((admission?.clears ?? clears) !== clears) queueRecheck(socket);
      // An API key does not expire (a revoked one is caught by the re-check on clear): its events skip the check, and
      // socket.io runs no middleware at all for a socket without one (no closures per event).
      if (admission?.credential.kind === 'api_key') return;
      socket.use((packet, next) => {
        // The socket's own admission: a re-check updates its expiry in place.
        if (!admission || !expired(admission)) return next();
        const ack = packet[packet.length - 1];
        if (typeof ack === 'function') (ack as (reply: unknown) => void)(tokenExpired().toBody());
        refuse(socket, tokenExpired());
      });
    },
    close() {
      closed = true;
      clearInterval(sweep);
      watched.clear();
      queued.clear();
    },
  };
}

/** The socket is told why (an `error` event `{error, code}`) and closed; a closed socket is left alone. */
function refuse(socket: Socket, error: unknown): void {
  if (!socket.connected) return;
  socket.emit('error', toApiError(error).toBody());
  socket.disconnect(true);
}

function tokenExpired(): ApiError {
  return ApiError.unauthorized('TOKEN_EXPIRED', 'The access token has expired; refresh it with POST /auth/refresh and reconnect');
}
