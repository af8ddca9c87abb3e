import type { TSchema } from 'typebox';
import type { Operation } from './operation.ts';
import { MAX_BODY_BYTES } from './request-input.ts';
import { ErrorBody } from './schemas/common.schema.ts';
import { parseInput } from './validation.ts';

type JsonObject = Record<string, unknown>;

/**
 * The OpenAPI 3.1 document, built from the same operation list as the router: never written by hand.
 * Paths are under /api; the server URL names the site host.
 */
export function buildOpenApi(operations: Operation[], baseDomain: string): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const operation of operations) {
    const path = `/api${operation.path}`;
    paths[path] ??= {};
    paths[path][operation.method.toLowerCase()] = describeOperation(operation);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Dispatch engine API',
      version: '0.1.0',
      description:
        'Multi-tenant courier and field-service dispatch. The site is the first label of the host; send exactly one ' +
        'credential header (x-api-key or x-access-token). Errors are {error, message, code} (error and message carry the same text).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      { url: `http://{site}.${baseDomain}`, description: 'a site host', variables: { site: { default: 'demo' } } },
      { url: `http://${baseDomain}`, description: 'platform host' },
    ],
    tags: [...new Set(operations.map((o) => o.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: { Error: plain(ErrorBody) },
      responses: Object.fromEntries(Object.values(ERROR_RESPONSES).map(({ name, description }) => [name, errorResponse(name, description)])),
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'application key (service account)' },
        accessToken: { type: 'apiKey', in: 'header', name: 'x-access-token', description: 'user session token' },
      },
    },
  };
}

function describeOperation(operation: Operation): JsonObject {
  const parameters = [
    ...parametersOf(operation.params, 'path'),
    ...parametersOf(operation.query, 'query'),
  ];
  return {
    operationId: operation.id,
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    tags: [operation.tag],
    'x-permission': operation.access,
    'x-host': operation.host,
    security: operation.access === 'public' ? [] : [{ apiKey: [] }, { accessToken: [] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(operation.body
      ? { requestBody: { required: bodyRequired(operation, operation.body), content: { 'application/json': { schema: plain(operation.body) } } } }
      : {}),
    responses: {
      [String(operation.status)]: {
        description: operation.summary,
        content: { 'application/json': { schema: plain(operation.response) } },
      },
      ...Object.fromEntries(
        Object.entries(ERROR_RESPONSES)
          .filter(([, { readsBody }]) => !readsBody || operation.body)
          .map(([status, { name }]) => [status, { $ref: `#/components/responses/${name}` }]),
      ),
    },
  };
}

type ErrorResponse = { name: string; description: string; readsBody?: true };

/** The errors an operation can answer; `readsBody` ones only where the pipeline reads a body (run-operation.ts). */
const ERROR_RESPONSES: Record<string, ErrorResponse> = {
  400: { name: 'BadRequest', description: 'Invalid input (VALIDATION_FAILED names the fields), or a request this host does not serve' },
  401: { name: 'Unauthorized', description: 'Missing or invalid credential' },
  403: { name: 'Forbidden', description: 'The credential lacks the permission, or the site is switched off' },
  404: { name: 'NotFound', description: 'No such record on this site, or no such site' },
  409: { name: 'Conflict', description: 'Conflict with the current state, e.g. a move the workflow does not allow' },
  413: { name: 'BodyTooLarge', description: `The body is larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB (BODY_TOO_LARGE)`, readsBody: true },
  415: { name: 'UnsupportedMediaType', description: 'The body is not application/json (UNSUPPORTED_MEDIA_TYPE)', readsBody: true },
  422: { name: 'Unprocessable', description: 'Well-formed but unprocessable, e.g. a banned zone' },
  429: { name: 'RateLimited', description: 'Rate limit exceeded (RATE_LIMITED): retry after Retry-After seconds' },
  500: { name: 'InternalError', description: 'Server error; no internals are revealed (INTERNAL_ERROR)' },
  502: { name: 'BadGateway', description: 'An upstream provider (mapping, integration) failed' },
};

function errorResponse(name: string, description: string): JsonObject {
  return {
    description,
    ...(name === 'RateLimited' ? { headers: RATE_LIMIT_HEADERS } : {}),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
}

/** What a 429 carries (http/rate-limit.ts, http/errors.ts). */
const RATE_LIMIT_HEADERS = {
  'Retry-After': { description: 'seconds to wait before a request is counted again', schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Limit': { description: 'requests allowed per window', schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Remaining': { description: 'requests left in this window', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'seconds until the window ends', schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Policy': { description: 'the quota as `<requests>;w=<window seconds>`', schema: { type: 'string' } },
};

/**
 * Whether a client must send a body. A missing body is read as `{}` (request-input.ts), so it is optional wherever `{}`
 * passes the schema. Never on a GET: its fields can come as query parameters, and fetch cannot send a GET's body.
 */
function bodyRequired(operation: Operation, body: TSchema): boolean {
  if (operation.method === 'GET') return false;
  try {
    parseInput(body, {}, 'body');
    return false;
  } catch {
    return true;
  }
}

function parametersOf(schema: TSchema | undefined, location: 'path' | 'query'): JsonObject[] {
  if (!schema) return [];
  const object = plain(schema) as { properties?: Record<string, JsonObject>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: location,
      required: location === 'path' || (object.required ?? []).includes(name),
      ...(description ? { description } : {}),
      schema: rest,
      ...(rest.type === 'array' ? { style: 'form', explode: true } : {}),
    };
  });
}

/** A TypeBox schema as plain JSON Schema: symbol keys and `$id` dropped (schemas are inlined). */
function plain(schema: TSchema): JsonObject {
  const json = JSON.parse(JSON.stringify(schema)) as JsonObject;
  delete json.$id;
  return json;
}
