import type { Socket } from 'socket.io';
import type { Services } from '../app/services.ts';
import { authenticate, readCredential, type Credential } from '../http/auth/authenticate.ts';
import { addressOf, anonymousQuotaKey, isUnidentified, trustedHops } from '../http/client-ip.ts';
import { rateLimitKey } from '../http/auth/principal.ts';
import { ApiError, toApiError } from '../http/errors.ts';
import { isAllowed, type Access } from '../http/permissions.ts';
import { parseHost } from '../http/tenancy.ts';
import { hashToken, TOKEN_PREFIXES } from '../persistence/secrets.ts';
import type { SocketData } from './events.ts';
import type { SocketCredentials } from './socket-credentials.ts';

/**
 * The credential of a handshake, the same ones as REST: `auth.token` or `Authorization: Bearer <token>` (an API key
 * `dsk_…` or an access token `dat_…`, told apart by their prefix), or the REST headers `x-api-key` / `x-access-token`.
 * Exactly one, as REST asks: a leftover header beside the token would otherwise be ignored without a word, and the
 * socket would act as whichever came first.
 * @throws ApiError 400 AMBIGUOUS_CREDENTIALS when more than one is sent
 */
export function handshakeCredential(socket: Pick<Socket, 'handshake'>): Credential | null {
  const auth = socket.handshake.auth as { token?: unknown } | undefined;
  const given = typeof auth?.token === 'string' && auth.token !== '' ? auth.token : undefined;
  const bearer = /^Bearer\s+(\S+)$/i.exec(String(socket.handshake.headers.authorization ?? ''))?.[1];
  const headers = new Headers();
  for (const name of ['x-api-key', 'x-access-token']) {
    const value = socket.handshake.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  const sent = [given, bearer, headers.get('x-api-key') ?? undefined, headers.get('x-access-token') ?? undefined].filter((value) => value !== undefined);
  if (new Set(sent).size > 1) throw ApiError.badRequest('AMBIGUOUS_CREDENTIALS', 'Send exactly one credential: auth.token, Authorization: Bearer, x-api-key or x-access-token');
  const token = given ?? bearer;
  if (token) {
    const kind = token.startsWith(`${TOKEN_PREFIXES.apiKey}_`) ? 'api_key' : 'session';
    return { kind, token, hash: hashToken(token) };
  }
  return readCredential(headers);
}

/** A refused handshake: the client's `connect_error` carries `data: {error, code}`. */
function refusal(error: unknown): Error & { data: unknown } {
  const api = toApiError(error);
  return Object.assign(new Error(api.message), { data: api.toBody() });
}

/**
 * socket.io middleware for a namespace: the Host's site (exactly as REST resolves it), then the credential on that
 * site, then the namespace's permission. The socket's site and user are fixed here for its whole life; its credential
 * is watched for as long as it is open (`SocketCredentials`).
 */
export function authenticateHandshake(services: Services, access: Access, credentials: SocketCredentials) {
  return async (socket: Socket, next: (error?: Error) => void): Promise<void> => {
    let counted = false;
    try {
      const now = services.clock.now().getTime();
      const forwarded = services.config.trustProxy ? socket.handshake.headers['x-forwarded-host'] : undefined;
      const target = parseHost(typeof forwarded === 'string' ? forwarded : (socket.handshake.headers.host ?? null), services.config.baseDomain);
      if (target.kind === 'platform') throw ApiError.badRequest('SITE_HOST_REQUIRED', `Sockets are served on a site's host (<subdomain>.${services.config.baseDomain})`);
      const site = await services.sites.resolve(target.subdomain);
      const credential = handshakeCredential(socket);
      if (!credential) throw ApiError.unauthorized('MISSING_CREDENTIALS', 'Send one credential: auth.token, Authorization: Bearer, x-api-key or x-access-token');
      const clearsBefore = credentials.clears();
      const principal = await authenticate({ orm: services.db.orm, credentials: services.credentials }, credential, site.id, now);
      if (!isAllowed(access, principal.role)) throw ApiError.forbidden(access, principal.role);
      // A handshake counts against the credential's REST quota: a reconnect storm is throttled like requests.
      counted = true;
      await services.rateLimiter.consume(rateLimitKey(principal));
      const data: SocketData = { siteId: site.id, subdomain: site.subdomain, userId: principal.userId, role: principal.role, applicationId: principal.applicationId };
      socket.data = data;
      credentials.admit(socket, credential, principal, access, clearsBefore);
      next();
    } catch (error) {
      next(refusal(counted ? error : await chargedToAddress(services, socket, error)));
    }
  };
}

/**
 * A handshake refused before the limiter (an unknown site host or credential: each a database query that is never
 * cached) counts against its address's anonymous quota, as a REST request does; past it, the refusal is 429.
 */
async function chargedToAddress(services: Services, socket: Socket, error: unknown): Promise<unknown> {
  if (!isUnidentified(toApiError(error).status)) return error;
  const forwarded = socket.handshake.headers['x-forwarded-for'];
  const address = addressOf(typeof forwarded === 'string' ? forwarded : undefined, socket.handshake.address, trustedHops(services.config));
  try {
    await services.rateLimiter.consume(anonymousQuotaKey(address));
    return error;
  } catch (limited) {
    return limited;
  }
}
