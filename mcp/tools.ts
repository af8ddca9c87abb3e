import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { callApi, unknownOperation, withOperationIndex, type ConnectorDeps } from './call-api.ts';
import { findOperation } from './openapi-index.ts';
import { describeOperation } from './operation-description.ts';
import { searchOperations } from './operation-search.ts';
import { PointerError, readPage, resolvePointer } from './result-view.ts';
import { messageOf, toolError, toolResult } from './tool-result.ts';

const OperationReference = z
  .string()
  .min(1)
  .describe('An operationId (e.g. "address.create") or "METHOD /path" (e.g. "POST /api/address"; the /api prefix may be left out)');

const Scalar = z.union([z.string(), z.number(), z.boolean()]);

/** Registers the connector's four tools: search_api, describe_api, call_api, read_api_result. */
export function registerTools(server: McpServer, deps: ConnectorDeps): void {
  server.registerTool(
    'search_api',
    {
      title: 'Search the API',
      description:
        'Find API operations by words: matched against paths, summaries, tags and field names (body properties, query ' +
        'parameters). Returns the best matches first, each with method, path, summary and operationId. Start here.',
      inputSchema: {
        query: z.string().min(1).describe('Words describing what you want to do, e.g. "create address" or "audit log"'),
        limit: z.number().int().min(1).max(50).optional().describe('Most operations to return (default 10)'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ query, limit }) =>
      withOperationIndex(deps, (index) => {
        const operations = searchOperations(index, query, limit ?? 10);
        if (operations.length > 0) return toolResult({ operations, total_operations: index.operations.length });
        const tags = [...new Set(index.operations.flatMap((o) => o.tags))];
        return toolResult({ operations, hint: 'Nothing matched: try a resource name, or one of the tags.', tags });
      }),
  );

  server.registerTool(
    'describe_api',
    {
      title: 'Describe an API operation',
      description:
        "An operation's inputs (path_params, query and body, as JSON Schema, matching call_api's arguments), its " +
        'required permission, the shape of its successful response and the error statuses it may answer.',
      inputSchema: { operation: OperationReference },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ operation }) =>
      withOperationIndex(deps, (index) => {
        const found = findOperation(index, operation);
        return found ? toolResult(describeOperation(found)) : unknownOperation(index, operation);
      }),
  );

  server.registerTool(
    'call_api',
    {
      title: 'Call an API operation',
      description:
        'Performs an operation with the configured API key and returns {status, body}. Failures (any non-2xx status, ' +
        'network errors) come back as errors carrying status and the API\'s {error, code}. A large result (over 20 KB ' +
        'or more than 100 items) is kept and summarised with a result_id: read it with read_api_result.',
      inputSchema: {
        operation: OperationReference,
        path_params: z.record(z.string(), z.union([z.string(), z.number()])).optional().describe('Values for {placeholders} in the path'),
        query: z
          .record(z.string(), z.union([Scalar, z.null(), z.array(Scalar)]))
          .optional()
          .describe('Query parameters; an array repeats the parameter'),
        body: z
          .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
          .optional()
          .describe('The JSON request body (see describe_api for its schema)'),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
    },
    (input) => callApi(deps, input),
  );

  server.registerTool(
    'read_api_result',
    {
      title: 'Read a stored result',
      description:
        'Pages through a large result kept by call_api. `path` is a JSON pointer into it (e.g. "/data"; "" or absent ' +
        'for the whole result). For an array: items [offset, offset+limit), the total and next_offset (null at the ' +
        'end). Otherwise: the value itself (shape and a prefix when very large).',
      inputSchema: {
        result_id: z.string().min(1).describe('The result_id returned by call_api'),
        path: z.string().optional().describe('JSON pointer into the result, e.g. "/data" or "/data/0"'),
        offset: z.number().int().min(0).optional().describe('First array item to return (default 0)'),
        limit: z.number().int().min(1).max(1000).optional().describe('Most array items to return (default 100)'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ result_id, path, offset, limit }): Promise<CallToolResult> => {
      const stored = deps.store.get(result_id);
      if (!stored) {
        return toolError({
          error: `No stored result ${result_id}: results live only in this process, and the least recently read are dropped when the store is full; call the operation again`,
          code: 'RESULT_NOT_FOUND',
        });
      }
      try {
        const target = resolvePointer(stored.value, path ?? '');
        return toolResult({ result_id, status: stored.status, path: path ?? '', ...readPage(target, offset ?? 0, limit ?? 100) });
      } catch (error) {
        if (error instanceof PointerError) return toolError({ error: error.message, code: 'INVALID_PATH' });
        return toolError({ error: messageOf(error), code: 'READ_FAILED' });
      }
    },
  );
}
