import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** A successful tool answer: the data as indented JSON text, the one content type every MCP client shows. */
export function toolResult(data: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(data, null, 2) }] };
}

/**
 * A failed tool answer (`isError: true`), so the agent sees the failure and can correct itself instead of the call
 * crashing. `data` always has `error` (a message) and `code`; API failures add `status`.
 */
export function toolError(data: { error: string; code: string; status?: number } & Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(data, null, 2) }] };
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
