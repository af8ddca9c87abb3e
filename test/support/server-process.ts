import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { ApiClient } from './http-client.ts';
import type { TestServer } from './test-server.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

export type ServerProcess = { port: number; child: ChildProcess; output: () => string; client(site: string | null): ApiClient; kill(signal?: NodeJS.Signals): Promise<void> };

/** Children still running when the test worker exits (a failed or timed-out file) are killed with it. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts the real server (`main.ts`) as a separate process on a free port and waits until it answers /healthz:
 * for tests of several processes on one database, and of crashes (`kill('SIGKILL')`).
 */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, NODE_ENV: 'test', LOG_LEVEL: 'warn', SEED_DEMO: 'false', BIND_ADDRESS: '127.0.0.1', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => running.delete(child));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server process exited early:\n${output}`);
    if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) break;
    if (Date.now() > deadline) {
      // Never leave a half-started server behind: it would hold database connections for the rest of the run.
      child.kill('SIGKILL');
      throw new Error(`server process did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    child,
    output: () => output,
    client: (site) => new ApiClient(port, site),
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** The environment under which a server process shares the test server's database, Redis prefix and secret key. */
export function sharedEnv(server: TestServer, extra: Record<string, string> = {}): Record<string, string> {
  const { redisUrl, redisPrefix, secretKey } = server.services.config;
  return { DATABASE_URL: server.databaseUrl, REDIS_URL: redisUrl!, REDIS_PREFIX: redisPrefix, SECRET_KEY: secretKey, ...extra };
}
