import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createApiRequester } from './api-request.ts';
import { ConfigError, readConnectorConfig, type ConnectorConfig } from './config.ts';
import { createLazyOperationIndex } from './openapi-index.ts';
import { createResultStore } from './result-store.ts';
import { registerTools } from './tools.ts';

// stdout carries the MCP protocol and nothing else: a stray console.log from any dependency would corrupt the
// stream, so it is sent to stderr with the other diagnostics.
Object.assign(console, { log: console.error, info: console.error, debug: console.error });

const INSTRUCTIONS =
  'Tools for the dispatch engine REST API of one site. Find operations with search_api, read their inputs with ' +
  'describe_api, perform them with call_api (as the configured API key: its role limits what is allowed), and page ' +
  'through large results with read_api_result.';

/** Entry point of the stdio MCP connector: `node --import tsx mcp/main.ts` with SVC_API_URL and SVC_API_KEY set. */
async function main(): Promise<void> {
  let config: ConnectorConfig;
  try {
    config = readConnectorConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`dispatch-mcp: cannot start.\n${error.message}\n`);
    process.exitCode = 2;
    return;
  }

  const request = createApiRequester(config.origin, config.apiKey, config.timeoutMs);
  const loadIndex = createLazyOperationIndex(async () => {
    const response = await request({ method: 'GET', path: '/openapi.json' });
    if (response.status !== 200) throw new Error(`GET ${config.origin.origin}/openapi.json answered ${response.status}`);
    return response.body;
  });
  const server = new McpServer({ name: 'dispatch-mcp', version: '0.1.0' }, { instructions: INSTRUCTIONS });
  registerTools(server, { loadIndex, request, store: createResultStore() });

  const shutdown = (code: number) => {
    server.close().finally(() => process.exit(code));
  };
  // The client ends the session by closing our stdin; keep-alive sockets must not keep the process running after.
  process.stdin.on('end', () => shutdown(0));
  process.on('SIGTERM', () => shutdown(0));
  process.on('SIGINT', () => shutdown(0));

  await server.connect(new StdioServerTransport());
  process.stderr.write(`dispatch-mcp: serving ${config.origin.origin} over stdio\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`dispatch-mcp: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
