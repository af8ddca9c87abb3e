import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { NetworkError, type ApiRequester } from './api-request.ts';
import { findOperation, isObject, type IndexedOperation, type OperationIndex } from './openapi-index.ts';
import { searchOperations } from './operation-search.ts';
import type { ResultStore } from './result-store.ts';
import { isLargeResult, summarizeResult } from './result-view.ts';
import { messageOf, toolError, toolResult } from './tool-result.ts';

export type ConnectorDeps = {
  /** The operation index of the site's /openapi.json, fetched once on first use. */
  loadIndex: () => Promise<OperationIndex>;
  request: ApiRequester;
  store: ResultStore;
};

type QueryValue = string | number | boolean | null | (string | number | boolean)[];

export type CallApiInput = {
  operation: string;
  path_params?: Record<string, string | number>;
  query?: Record<string, QueryValue>;
  body?: unknown;
};

/** Runs `use` with the operation index; answers a tool error instead when /openapi.json cannot be had. */
export async function withOperationIndex(
  deps: ConnectorDeps,
  use: (index: OperationIndex) => CallToolResult | Promise<CallToolResult>,
): Promise<CallToolResult> {
  let index: OperationIndex;
  try {
    index = await deps.loadIndex();
  } catch (error) {
    return toolError({ error: `Could not load the API description (/openapi.json): ${messageOf(error)}`, code: 'OPENAPI_UNAVAILABLE' });
  }
  return use(index);
}

/** The tool error for an operation reference that names nothing, with the nearest operations as suggestions. */
export function unknownOperation(index: OperationIndex, reference: string): CallToolResult {
  return toolError({
    error: `No operation ${JSON.stringify(reference)}: give an operationId (e.g. user.create) or "METHOD /path"`,
    code: 'UNKNOWN_OPERATION',
    suggestions: searchOperations(index, reference, 5),
  });
}

/**
 * Performs one API operation with the configured key. A 2xx answer comes back as `{status, body}`, or, when large,
 * as a summary with a `result_id` for read_api_result. Non-2xx answers and network failures come back as tool errors
 * carrying the status and the API's `{error, code}`; nothing here throws.
 */
export function callApi(deps: ConnectorDeps, input: CallApiInput): Promise<CallToolResult> {
  return withOperationIndex(deps, (index) => callOperation(deps, index, input));
}

async function callOperation(deps: ConnectorDeps, index: OperationIndex, input: CallApiInput): Promise<CallToolResult> {
  const operation = findOperation(index, input.operation);
  if (!operation) return unknownOperation(index, input.operation);
  // The spec writes some operations with their query (`GET /route | query: id=...`), and an agent may copy that:
  // `GET /job?page=3` is read as the operation plus its query (values given in `query` win), not sent without it.
  const [reference, inlineQuery = ''] = input.operation.split('?', 2) as [string, string?];
  const path = buildPath(operation, reference, input.path_params ?? {});
  if (typeof path !== 'string') return path;
  const query = { ...queryOfReference(inlineQuery), ...input.query };
  // A GET takes a body only where the document gives it one (the spec's GET /dispatch/available-drivers does).
  if (input.body !== undefined && operation.body === null && (operation.method === 'GET' || operation.method === 'HEAD')) {
    return toolError({ error: `${operation.method} ${operation.path} takes no body: pass inputs as query`, code: 'BODY_NOT_ALLOWED' });
  }

  let response;
  try {
    response = await deps.request({ method: operation.method, path: path + queryString(query), body: input.body });
  } catch (error) {
    // A change sent in full whose answer never came may have been made: the agent must read the state back before
    // trying again, not take it as a plain failure.
    const unknown = error instanceof NetworkError && error.sent && operation.method !== 'GET' && operation.method !== 'HEAD';
    return toolError({
      error: unknown ? `${messageOf(error)}: the API may have carried it out; read the state back before retrying` : messageOf(error),
      code: unknown ? 'OUTCOME_UNKNOWN' : error instanceof NetworkError ? 'NETWORK_ERROR' : 'REQUEST_FAILED',
    });
  }
  if (response.status < 200 || response.status > 299) {
    const apiError = isObject(response.body) ? response.body : { body: response.body };
    return toolError({
      ...apiError,
      error: typeof apiError.error === 'string' ? apiError.error : `HTTP ${response.status}`,
      code: typeof apiError.code === 'string' ? apiError.code : `HTTP_${response.status}`,
      status: response.status,
      operation: `${operation.method} ${operation.path}`,
      // The API says when to try again (429 RATE_LIMITED) in a header the tool's caller never sees: as a field.
      ...(response.retryAfterSeconds !== undefined ? { retry_after_s: response.retryAfterSeconds } : {}),
    });
  }
  if (!isLargeResult(response.body, response.bytes)) return toolResult({ status: response.status, body: response.body });
  try {
    const stored = deps.store.put(response.status, response.body, response.bytes);
    return toolResult({
      status: response.status,
      result_id: stored.id,
      bytes: stored.bytes,
      ...summarizeResult(response.body),
      hint: 'Large result stored: page through it with read_api_result {result_id, path: items_path, offset, limit}.',
    });
  } catch (error) {
    return toolError({ error: messageOf(error), code: 'RESULT_TOO_LARGE', status: response.status });
  }
}

/**
 * The request path: `{name}` placeholders filled from path_params, or, when the reference itself was a concrete
 * path (`GET /api/user/usr_1`), that path. Returns a tool error when a placeholder has no value.
 */
function buildPath(operation: IndexedOperation, reference: string, params: Record<string, string | number>): string | CallToolResult {
  const concrete = /^[a-z]+\s+(\/?[^\s?{}]+)$/i.exec(reference.trim())?.[1];
  if (concrete && operation.path.includes('{') && Object.keys(params).length === 0) {
    const rooted = concrete.startsWith('/') ? concrete : `/${concrete}`;
    return operation.path.startsWith('/api/') && !rooted.startsWith('/api/') ? `/api${rooted}` : rooted;
  }
  const missing: string[] = [];
  const path = operation.path.replace(/\{(\w+)\}/g, (_whole, name: string) => {
    const value = params[name];
    if (value === undefined || value === '') missing.push(name);
    return encodeURIComponent(String(value ?? ''));
  });
  if (missing.length > 0) {
    return toolError({ error: `${operation.method} ${operation.path} needs path_params: ${missing.join(', ')}`, code: 'MISSING_PATH_PARAMS' });
  }
  return path;
}

/** `?a=1&tag=x&tag=y`: arrays repeat the key (OpenAPI's form style, explode), null leaves the key out. */
/** The query written into an operation reference (`a=1&a=2&b=x`), as `query` takes it. */
function queryOfReference(text: string): Record<string, QueryValue> {
  const query: Record<string, string[]> = {};
  for (const [key, value] of new URLSearchParams(text)) (query[key] ??= []).push(value);
  return Object.fromEntries(Object.entries(query).map(([key, values]) => [key, values.length === 1 ? values[0]! : values]));
}

function queryString(query: Record<string, QueryValue>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(key, String(item));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}
