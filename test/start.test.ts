import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const workdir = mkdtempSync(path.join(tmpdir(), 'dispatch-clone-'));

afterAll(() => rmSync(workdir, { recursive: true, force: true }));

/** The project's files as a clone has them (tracked, plus new files not ignored), without node_modules or .data. */
function cloneInto(target: string): void {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(path.dirname(path.join(target, file)), { recursive: true });
    cpSync(path.join(ROOT, file), path.join(target, file));
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(target, 'node_modules'), 'dir');
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function waitForHealth(url: string, deadline: number): Promise<boolean> {
  while (Date.now() < deadline) {
    const healthy = await fetch(url).then((r) => r.ok, () => false);
    if (healthy) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

describe('a fresh clone', () => {
  it('answers /healthz within 30 s of `npm start` with no configuration, on the embedded database', async () => {
    cloneInto(workdir);
    const port = await freePort();
    const child = spawn('npm', ['start'], {
      cwd: workdir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const started = Date.now();
      const healthy = await waitForHealth(`http://127.0.0.1:${port}/healthz`, started + 30_000);
      expect(healthy, output).toBe(true);
      expect(output).toContain('API key (admin): dsk_');
      expect(output).toMatch(/dispatcher\s+dispatcher@demo\.example/);
      const key = /dsk_[A-Za-z0-9_-]+/.exec(output)![0];
      const me = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.json());
      expect(me).toMatchObject({ database: 'pglite' });
      expect(key.length).toBeGreaterThan(40);
    } finally {
      // npm does not forward signals to the server it started: stop the whole process group.
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    }
  }, 60_000);
});
