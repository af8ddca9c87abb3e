import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Exactly how the lead's `npm run mcp` starts the connector. */
const CONNECTOR = { command: process.execPath, args: ['--import', 'tsx', 'mcp/main.ts'] };

export type ConnectorEnv = { SVC_API_URL?: string; SVC_API_KEY?: string; SVC_API_TIMEOUT_MS?: string };

export type ToolAnswer = { isError: boolean; data: Record<string, unknown> };

export type Connector = {
  client: Client;
  /** Calls a tool and parses its JSON text content. */
  call(name: string, args: Record<string, unknown>): Promise<ToolAnswer>;
  stderr(): string;
  close(): Promise<void>;
};

/** The real connector process, driven by the SDK's own client over stdio. */
export async function startConnector(env: ConnectorEnv): Promise<Connector> {
  const transport = new StdioClientTransport({ ...CONNECTOR, cwd: REPO_ROOT, env: definedOnly(env), stderr: 'pipe' });
  const stderrChunks: string[] = [];
  (transport.stderr as PassThrough | null)?.on('data', (chunk: Buffer) => stderrChunks.push(chunk.toString('utf8')));
  const client = new Client({ name: 'dispatch-mcp-test', version: '0.0.0' });
  await client.connect(transport);
  return {
    client,
    async call(name, args) {
      const result = await client.callTool({ name, arguments: args });
      const content = result.content as { type: string; text?: string }[];
      const text = content.find((part) => part.type === 'text')?.text ?? 'null';
      return { isError: result.isError === true, data: JSON.parse(text) as Record<string, unknown> };
    },
    stderr: () => stderrChunks.join(''),
    close: () => client.close(),
  };
}

export type RawRun = { code: number | null; stdout: string; stderr: string };

/**
 * Runs the connector with plain pipes (no SDK client consuming stdout), writes `messages` as JSON lines, waits until
 * the responses to every request id have arrived (or the process exits), then closes stdin and waits for the exit.
 */
export function runConnectorRaw(env: ConnectorEnv, messages: object[] = []): Promise<RawRun> {
  const child = spawn(CONNECTOR.command, CONNECTOR.args, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...definedOnly(env) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const expectedIds = new Set(messages.flatMap((m) => ('id' in m ? [m.id] : [])));
  let stdout = '';
  let stderr = '';
  const answered = () => stdout.split('\n').filter(Boolean).flatMap((line) => safeId(line)).filter((id) => expectedIds.has(id)).length;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    if (answered() >= expectedIds.size) child.stdin.end();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  // EPIPE when the process already exited (missing env): that is the case under test, not a failure.
  child.stdin.on('error', () => {});
  for (const message of messages) child.stdin.write(`${JSON.stringify(message)}\n`);
  if (expectedIds.size === 0) child.stdin.end();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`connector did not finish; stderr: ${stderr}`));
    }, 20_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function safeId(line: string): unknown[] {
  try {
    const message = JSON.parse(line) as { id?: unknown };
    return 'id' in message ? [message.id] : [];
  } catch {
    return [];
  }
}

function definedOnly(env: ConnectorEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}
