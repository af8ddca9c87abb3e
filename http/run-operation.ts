import { randomUUID } from 'node:crypto';
import { getRouterParams, type H3Event } from 'h3';
import { FastResponse } from 'srvx';
import type { Services } from '../app/services.ts';
import type { Site } from '../persistence/entities/site.entity.ts';
import { inTenantScope, type TenantScope } from '../persistence/tenant-scope.ts';
import { tenantRead } from '../engine/runtime/tenant-read.ts';
import { authenticate, readCredential, type Credential } from './auth/authenticate.ts';
import { anonymousQuotaKey, clientIp, isUnidentified, trustedHops } from './client-ip.ts';
import { rateLimitKey, type Principal } from './auth/principal.ts';
import { ApiError, toApiError } from './errors.ts';
import type { Operation, OperationContext } from './operation.ts';
import { isAllowed } from './permissions.ts';
import { readJsonBody, readQuery, readRequestId } from './request-input.ts';
import { parseHost } from './tenancy.ts';
import { describeErrors, parseInput, validatorFor } from './validation.ts';
import { wroteEvents } from '../persistence/outbox.ts';

/** What h3 sent for a returned object: kept byte for byte now that the pipeline serializes itself. */
export const JSON_CONTENT_TYPE = 'application/json;charset=UTF-8';

/** Serialized bodies of response objects served many times unchanged (see serializeOnce). */
const serializedBodies = new WeakMap<object, string>();

/**
 * Marks a response body that will be served many times unchanged (a cached one, like `/auth/me`'s): it is
 * serialized here, once, and every response that returns this very object sends those bytes. Never mutate it after.
 */
export function serializeOnce<T extends object>(body: T): T {
  serializedBodies.set(body, JSON.stringify(body));
  return body;
}

/**
 * The request pipeline of every operation, in this order: host → site, credential → principal, rate limit,
 * permission, input validation, handler, (in tests) response validation. Every outcome is `{data}` or
 * `{error, code}` with a request id; nothing thrown escapes as an HTML page or a stack trace.
 *
 * Steps answered from memory (a cached site, a cached credential, a handler's cached result) come back as plain
 * values and are not awaited: with MikroORM's async contexts on, every promise and `await` runs Node's async hooks,
 * and a dozen of them cost a cached GET more CPU than all its steps together. A warm `/auth/me` awaits only the
 * rate limiter (Redis).
 *
 * The answer goes back as a srvx FastResponse with the body already serialized and the headers as a plain object:
 * srvx hands both to node:http as they are, where returning the object (and setting `event.res.headers`) made h3
 * build and merge two WHATWG Headers per request and serialize the body on its own.
 */
export async function runOperation(services: Services, operation: Operation, event: H3Event): Promise<Response> {
  const started = performance.now();
  const now = services.clock.now().getTime();
  // A UUID: Node draws it from a cached entropy pool (a ULID costs 16 random-byte calls, ~18% of a cached GET).
  const requestId = readRequestId(event.req.headers, randomUUID);
  let site: Site | null = null;
  let principal: Principal | null = null;
  let status = operation.status;
  let payload: unknown;
  let extraHeaders: Record<string, string> | undefined;
  /** Whether this request has been counted against a quota yet. */
  let counted = false;
  try {
    const resolvedSite = resolveSite(services, operation, event);
    site = resolvedSite instanceof Promise ? await resolvedSite : resolvedSite;
    const isPublic = operation.access === 'public';
    const credential = isPublic ? null : readCredential(event.req.headers);
    if (!isPublic) {
      if (!credential) throw ApiError.unauthorized('MISSING_CREDENTIALS', 'Send one credential: x-api-key or x-access-token');
      const resolved = authenticate({ orm: services.db.orm, credentials: services.credentials }, credential, site?.id ?? null, now);
      principal = resolved instanceof Promise ? await resolved : resolved;
    }
    counted = true;
    extraHeaders = (await services.rateLimiter.consume(principal ? rateLimitKey(principal) : anonymousKey(services, event))).headers;
    if (principal && !isAllowed(operation.access, principal.role)) throw ApiError.forbidden(operation.access, principal.role);
    const query = operation.query ? parseInput(operation.query, readQuery(event.url, operation.query), 'query') : undefined;
    const params = operation.params ? parseInput(operation.params, getRouterParams(event), 'query') : undefined;
    const body = operation.body ? parseInput(operation.body, await readJsonBody(event), 'body') : undefined;
    const result = operation.handler(handlerContext(services, event, { query, body, params, principal, credential, site, requestId }));
    payload = result instanceof Promise ? await result : result;
    if (services.config.responseValidation) assertResponseShape(operation, payload);
  } catch (thrown) {
    let error = toApiError(thrown);
    if (!counted && isUnidentified(error.status)) {
      // Refused before the limiter (an unknown site host or credential, each a database query that is never
      // cached): charged to the address's anonymous quota, else a flood of made-up keys or hosts met no limit.
      try {
        extraHeaders = (await services.rateLimiter.consume(anonymousKey(services, event))).headers;
      } catch (limited) {
        error = toApiError(limited);
      }
    }
    if (error.status >= 500) services.logger.error({ err: describeFailure(thrown), req_id: requestId, op: operation.id }, 'request failed');
    // A refusal after the rate limit still carries its headers; the error's own (Retry-After) come on top.
    if (error.details.headers) extraHeaders = { ...extraHeaders, ...error.details.headers };
    status = error.status;
    payload = error.toBody();
  }
  if (services.logger.isLevelEnabled('info')) {
    services.logger.info({
      req_id: requestId,
      op: operation.id,
      method: operation.method,
      path: event.url.pathname,
      status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      site: site?.subdomain ?? null,
      user: principal?.userId ?? null,
    });
  }
  return new FastResponse(serialize(payload), {
    status,
    headers: { 'content-type': JSON_CONTENT_TYPE, 'x-request-id': requestId, ...extraHeaders },
  });
}

type Resolved = {
  query: unknown;
  body: unknown;
  params: unknown;
  principal: Principal | null;
  credential: Credential | null;
  site: Site | null;
  requestId: string;
};

/** What a handler gets: the validated input, the caller, and a transaction in the request's tenant. */
function handlerContext(services: Services, event: H3Event, resolved: Resolved): OperationContext<unknown, unknown, unknown> {
  const { principal, site } = resolved;
  return {
    query: resolved.query,
    body: resolved.body,
    params: resolved.params,
    principal,
    credentialHash: resolved.credential?.hash ?? null,
    site,
    services,
    requestId: resolved.requestId,
    // Read only by the handlers that need it.
    get ip() {
      return clientIp(event, trustedHops(services.config));
    },
    actor: { userId: principal?.userId ?? null, applicationId: principal?.applicationId ?? null, requestId: resolved.requestId },
    transaction: async (work, scope) => {
      let events = false;
      const result = await inTenantScope(services.db.orm, scope ?? requestTenant(resolved), async (em) => {
        const done = await work(em);
        events = wroteEvents(em);
        return done;
      });
      // Committed: events it wrote leave now, as an engine command's do, not at the relay's next poll.
      if (events) services.outboxRelay.kick();
      return result;
    },
    read: (sql, params, options) => tenantRead(services.db.orm, requestTenant(resolved))(sql, params, options),
  };
}

/** The tenant a request acts in: the Host's site (or the platform) and the caller. */
const requestTenant = ({ site, principal }: Resolved): TenantScope => ({ siteId: site?.id ?? null, userId: principal?.userId ?? null, platform: principal?.role === 'platform' });

/** A 200 with an already serialized JSON body, sent as it is. */
export function jsonResponse(json: string): Response {
  return new FastResponse(json, { status: 200, headers: { 'content-type': JSON_CONTENT_TYPE } });
}

function serialize(payload: unknown): string {
  if (payload === undefined) return '';
  return (typeof payload === 'object' && payload !== null && serializedBodies.get(payload)) || JSON.stringify(payload);
}

/** The quota key of a caller without a (valid) credential: its address. */
function anonymousKey(services: Services, event: H3Event): string {
  return anonymousQuotaKey(clientIp(event, trustedHops(services.config)));
}

function resolveSite(services: Services, operation: Operation, event: H3Event): Site | null | Promise<Site> {
  const forwarded = services.config.trustProxy ? event.req.headers.get('x-forwarded-host') : null;
  const target = parseHost(forwarded ?? event.req.headers.get('host'), services.config.baseDomain);
  if (target.kind === 'platform') {
    if (operation.host === 'site') {
      throw ApiError.badRequest('SITE_HOST_REQUIRED', `${operation.method} ${operation.path} is served on a site's host (<subdomain>.${services.config.baseDomain})`);
    }
    return null;
  }
  if (operation.host === 'platform') {
    throw ApiError.badRequest('PLATFORM_HOST_REQUIRED', `${operation.method} ${operation.path} is served on the platform host (${services.config.baseDomain})`);
  }
  return services.sites.resolve(target.subdomain);
}

function assertResponseShape(operation: Operation, payload: unknown): void {
  const validator = validatorFor(operation.response);
  if (validator.Check(payload)) return;
  const problems = describeErrors(validator, payload).map((f) => `${f.field}: ${f.message}`);
  throw new ApiError(500, 'RESPONSE_SCHEMA_MISMATCH', `Response of ${operation.id} breaks its schema`, {
    description: problems.join('; '),
  });
}

/**
 * What a 500 logs: the error's type, code and message with SQL and its parameters cut off, since a failed
 * statement's text carries row data (names, emails) that has no place in logs.
 */
export function describeFailure(thrown: unknown): Record<string, unknown> {
  if (!(thrown instanceof Error)) return { message: String(thrown) };
  const code = (thrown as { code?: unknown }).code;
  const message = thrown.message.includes(' - ') ? thrown.message.slice(thrown.message.lastIndexOf(' - ') + 3) : thrown.message;
  return { type: thrown.name, code, message: message.slice(0, 500), stack: thrown.stack?.split('\n').slice(1, 6).join('\n') };
}
