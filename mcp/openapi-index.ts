export type JsonObject = Record<string, unknown>;

export type OperationParameter = { name: string; in: 'path' | 'query'; required: boolean; description?: string; schema: JsonObject };

/** One operation of the OpenAPI document, flattened for searching, describing and calling. */
export type IndexedOperation = {
  operationId: string | null;
  /** Upper case: GET, POST, ... */
  method: string;
  /** As in the document, with the `/api` prefix: `/api/address`. */
  path: string;
  summary: string;
  description: string;
  tags: string[];
  /** The `x-permission` the API checks, when the document states it. */
  permission: string | null;
  parameters: OperationParameter[];
  /** The JSON request body's schema, local `$ref`s resolved; null when the operation takes no body. */
  body: JsonObject | null;
  /** Schema of each documented response by status code (null when the response has no JSON body). */
  responses: Record<string, JsonObject | null>;
  /** Names of body properties (nested too) and query parameters: what a caller would search for. */
  fieldNames: string[];
};

export type OperationIndex = { title: string; operations: IndexedOperation[] };

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;

/** Flattens an OpenAPI 3.x document (as fetched, so checked defensively) into an index. Throws on a non-document. */
export function createOperationIndex(document: unknown): OperationIndex {
  if (!isObject(document) || !isObject(document.paths)) throw new Error('the document at /openapi.json has no `paths`');
  const root = document;
  const resolve = (value: unknown) => resolveLocalRefs(value, root, 0);
  const operations: IndexedOperation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    if (!isObject(item)) continue;
    const shared = asArray(item.parameters);
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const parameters = [...shared, ...asArray(operation.parameters)].map(resolve).flatMap(toParameter);
      const body = jsonSchemaOf(operation.requestBody, resolve);
      const responses = Object.fromEntries(
        Object.entries(isObject(operation.responses) ? operation.responses : {}).map(([status, response]) => [status, jsonSchemaOf(response, resolve)]),
      );
      operations.push({
        operationId: typeof operation.operationId === 'string' ? operation.operationId : null,
        method: method.toUpperCase(),
        path,
        summary: typeof operation.summary === 'string' ? operation.summary : '',
        description: typeof operation.description === 'string' ? operation.description : '',
        tags: asArray(operation.tags).filter((tag): tag is string => typeof tag === 'string'),
        permission: typeof operation['x-permission'] === 'string' ? operation['x-permission'] : null,
        parameters,
        body,
        responses,
        fieldNames: [...new Set([...propertyNames(body, 0), ...parameters.filter((p) => p.in === 'query').map((p) => p.name)])],
      });
    }
  }
  const info = isObject(document.info) ? document.info : {};
  return { title: typeof info.title === 'string' ? info.title : 'API', operations };
}

/**
 * Finds an operation by operationId (`user.create`, case-insensitive) or by `METHOD /path`: the path with or without
 * the `/api` prefix, and either as the template (`/api/user/{id}`) or with values in it (`/api/user/usr_1`).
 */
export function findOperation(index: OperationIndex, reference: string): IndexedOperation | undefined {
  const wanted = reference.trim();
  const byRoute = /^([a-z]+)\s+(\S+)$/i.exec(wanted);
  if (byRoute?.[1] && byRoute[2]) {
    const method = byRoute[1].toUpperCase();
    const path = normalisePath(byRoute[2]);
    const candidates = index.operations.filter((o) => o.method === method);
    for (const target of [path, `/api${path}`]) {
      const found = candidates.find((o) => normalisePath(o.path) === target) ?? candidates.find((o) => matchesTemplate(o.path, target));
      if (found) return found;
    }
    return undefined;
  }
  return index.operations.find((o) => o.operationId === wanted) ?? index.operations.find((o) => o.operationId?.toLowerCase() === wanted.toLowerCase());
}

/** Calls `load` the first time it is needed and keeps the index; a failed load is forgotten so the next call retries. */
export function createLazyOperationIndex(load: () => Promise<unknown>): () => Promise<OperationIndex> {
  let pending: Promise<OperationIndex> | undefined;
  return () => {
    pending ??= load()
      .then(createOperationIndex)
      .catch((error: unknown) => {
        pending = undefined;
        throw error;
      });
    return pending;
  };
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function toParameter(value: unknown): OperationParameter[] {
  if (!isObject(value) || typeof value.name !== 'string' || (value.in !== 'path' && value.in !== 'query')) return [];
  return [
    {
      name: value.name,
      in: value.in,
      required: value.in === 'path' || value.required === true,
      ...(typeof value.description === 'string' ? { description: value.description } : {}),
      schema: isObject(value.schema) ? value.schema : {},
    },
  ];
}

/** The `application/json` schema of a request body or response object. */
function jsonSchemaOf(holder: unknown, resolve: (value: unknown) => unknown): JsonObject | null {
  const resolved = resolve(holder);
  if (!isObject(resolved) || !isObject(resolved.content)) return null;
  const json = Object.entries(resolved.content).find(([type]) => type.includes('json'))?.[1];
  return isObject(json) && isObject(json.schema) ? json.schema : null;
}

function propertyNames(schema: unknown, depth: number): string[] {
  if (!isObject(schema) || depth > 3) return [];
  const nested = [schema.items, ...asArray(schema.anyOf), ...asArray(schema.oneOf), ...asArray(schema.allOf)];
  const own = isObject(schema.properties) ? Object.entries(schema.properties) : [];
  return [
    ...own.flatMap(([name, property]) => [name, ...propertyNames(property, depth + 1)]),
    ...nested.flatMap((branch) => propertyNames(branch, depth + 1)),
  ];
}

/** Inlines `#/...` references; depth-bounded because schemas may refer to themselves. */
function resolveLocalRefs(value: unknown, root: JsonObject, depth: number): unknown {
  if (Array.isArray(value)) return value.map((item) => resolveLocalRefs(item, root, depth));
  if (!isObject(value)) return value;
  if (typeof value.$ref === 'string' && value.$ref.startsWith('#/')) {
    if (depth >= 8) return { $ref: value.$ref };
    const target = value.$ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => (isObject(node) ? node[key.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined), root);
    return target === undefined ? value : resolveLocalRefs(target, root, depth + 1);
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolveLocalRefs(item, root, depth)]));
}

function normalisePath(path: string): string {
  const bare = path.split('?')[0] ?? '';
  const rooted = bare.startsWith('/') ? bare : `/${bare}`;
  return rooted.length > 1 ? rooted.replace(/\/+$/, '') : rooted;
}

function matchesTemplate(template: string, path: string): boolean {
  const expected = normalisePath(template).split('/');
  const actual = path.split('/');
  return expected.length === actual.length && expected.every((segment, i) => /^\{\w+\}$/.test(segment) ? Boolean(actual[i]) : segment === actual[i]);
}
