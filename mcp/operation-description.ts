import type { IndexedOperation } from './openapi-index.ts';

/**
 * What an agent needs to call an operation: its inputs split by where they go (path_params, query, body, matching
 * call_api's arguments), the shape of its successful response, and the statuses it may fail with.
 */
export function describeOperation(operation: IndexedOperation) {
  const parametersIn = (location: 'path' | 'query') =>
    operation.parameters
      .filter((p) => p.in === location)
      .map((p) => ({ name: p.name, required: p.required, ...(p.description ? { description: p.description } : {}), schema: p.schema }));
  const statuses = Object.keys(operation.responses);
  const success = statuses.filter((status) => status.startsWith('2'));
  return {
    operationId: operation.operationId,
    method: operation.method,
    path: operation.path,
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    tags: operation.tags,
    ...(operation.permission ? { permission: operation.permission } : {}),
    input: {
      path_params: parametersIn('path'),
      query: parametersIn('query'),
      body: operation.body,
    },
    responses: Object.fromEntries(success.map((status) => [status, operation.responses[status] ?? null])),
    error_statuses: statuses.filter((status) => !status.startsWith('2')),
    error_shape: '{error, message, code, description?, fields?}',
  };
}
