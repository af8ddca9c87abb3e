import type { TSchema } from 'typebox';
import type { Operation } from './operation.ts';
import { ErrorBody } from './schemas/common.schema.ts';

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
  const errorResponse = { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
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
      ? { requestBody: { required: true, content: { 'application/json': { schema: plain(operation.body) } } } }
      : {}),
    responses: {
      [String(operation.status)]: {
        description: operation.summary,
        content: { 'application/json': { schema: plain(operation.response) } },
      },
      ...Object.fromEntries(['400', '401', '403', '404', '409', '422', '429', '502'].map((code) => [code, errorResponse])),
    },
  };
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

/**
 * The same document as OpenAPI 3.0.3 (the spec names 3.0): `const` → `enum`, `anyOf` with null and type arrays →
 * `nullable`, `patternProperties` → `additionalProperties`, and 3.1-only fields dropped.
 */
export function toOpenApi30(document: JsonObject): JsonObject {
  const converted = downgrade(structuredClone(document)) as JsonObject;
  converted.openapi = '3.0.3';
  const info = converted.info as JsonObject;
  delete (info.license as JsonObject).identifier;
  return converted;
}

function downgrade(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(downgrade);
  if (typeof value !== 'object' || value === null) return value;
  const node = value as JsonObject;
  for (const key of Object.keys(node)) node[key] = downgrade(node[key]);
  if (node.patternProperties && typeof node.patternProperties === 'object') {
    const [valueSchema] = Object.values(node.patternProperties as JsonObject);
    node.additionalProperties = valueSchema ?? true;
    delete node.patternProperties;
  }
  if ('const' in node) {
    node.enum = [node.const];
    delete node.const;
  }
  if (Array.isArray(node.anyOf)) {
    const branches = node.anyOf as JsonObject[];
    const nonNull = branches.filter((b) => b.type !== 'null');
    if (nonNull.length < branches.length) {
      if (nonNull.length === 1) {
        delete node.anyOf;
        Object.assign(node, nonNull[0], { nullable: true });
      } else {
        node.anyOf = nonNull;
        node.nullable = true;
      }
    }
  }
  if (Array.isArray(node.type)) {
    const types = (node.type as string[]).filter((t) => t !== 'null');
    if (types.length < (node.type as string[]).length) node.nullable = true;
    node.type = types.length === 1 ? types[0] : types;
  }
  return node;
}
