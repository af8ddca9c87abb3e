import { randomUUID } from 'node:crypto';
import { METHODS } from 'node:http';
import type { H3, H3Event, HTTPMethod } from 'h3';
import { FastResponse } from 'srvx';
import { ApiError } from './errors.ts';
import { readRequestId } from './request-input.ts';
import { JSON_CONTENT_TYPE } from './run-operation.ts';

const CATCH_ALL = '/**';

/**
 * Answers what no route took, in the API's error shape and with an `x-request-id`: a path the app serves, asked with
 * a method it does not serve, is `405 METHOD_NOT_ALLOWED` with `Allow` naming the path's methods; any other path is
 * `404 ROUTE_NOT_FOUND`.
 *
 * Registered for every method node:http accepts except HEAD: h3 serves a HEAD with the path's GET route (and drops the
 * body) only when no route matched the HEAD itself, so a catch-all for all methods answered `HEAD /healthz` 404. A
 * HEAD whose path has no GET reaches this fallback through that same retry, as a GET route, with its method HEAD.
 * Mount it in `createHttpApp`: routes mounted later (attachments, the integration callback) are looked up per request.
 */
export function mountRouteFallback(app: H3): void {
  const fallback = (event: H3Event) => answerUnrouted(app, event);
  // h3 routes any method name at run time; its type names only the common ones (PROPFIND too gets the JSON answer).
  for (const method of METHODS) if (method !== 'HEAD') app.on(method as HTTPMethod, CATCH_ALL, fallback);
}

function answerUnrouted(app: H3, event: H3Event): Response {
  const requestId = readRequestId(event.req.headers, randomUUID);
  const { method } = event.req;
  const { pathname } = event.url;
  const allowed = methodsServing(app, pathname);
  const error = allowed.length > 0
    ? new ApiError(405, 'METHOD_NOT_ALLOWED', `${method} is not served on ${pathname}; it serves ${allowed.join(', ')}`)
    : new ApiError(404, 'ROUTE_NOT_FOUND', `No operation ${method} ${pathname}`);
  return new FastResponse(JSON.stringify(error.toBody()), {
    status: error.status,
    headers: {
      'content-type': JSON_CONTENT_TYPE,
      'x-request-id': requestId,
      ...(allowed.length > 0 ? { allow: allowed.join(', ') } : {}),
    },
  });
}

/**
 * The methods of every route whose pattern matches `pathname` (HEAD wherever GET is), sorted.
 * h3 offers no public list of its routes: `~routes` is the one its own `removeRoute` reads (h3 is pinned to an exact
 * version, and test/http/method-fallback.test.ts fails if it ever stops listing them).
 */
function methodsServing(app: H3, pathname: string): string[] {
  const methods = new Set<string>();
  const segments = splitPath(pathname);
  for (const { method, route } of app['~routes']) {
    if (!method || !route || route === CATCH_ALL || !patternMatches(splitPath(route), segments)) continue;
    methods.add(method);
    if (method === 'GET') methods.add('HEAD');
  }
  return [...methods].sort();
}

/** Segments of a path, ignoring a trailing slash as h3's router (rou3) does. */
function splitPath(path: string): string[] {
  return path.replace(/\/$/, '').split('/').slice(1);
}

/** rou3's pattern syntax as this app uses it: literal segments, `:name` and `*` for one segment, `**` for the rest. */
function patternMatches(pattern: string[], segments: string[]): boolean {
  for (const [index, part] of pattern.entries()) {
    if (part === '**' || part.startsWith('**:')) return true;
    const segment = segments[index];
    if (segment === undefined) return false;
    if (part !== '*' && !part.startsWith(':') && part !== segment) return false;
  }
  return pattern.length === segments.length;
}
