import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * Runs the simulator's CLI as a user would, its stdout piped through `cat` by the shell, and collects what came
 * through. A shell pipe, not the child's own stdout: Node gives a child a socket pair, which the CLI's output
 * would cross whole either way; a real pipe is what cut it.
 */
function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const command = `set -o pipefail; "${process.execPath}" --import tsx sim/main.ts ${args.join(' ')} | cat`;
    const child = spawn('bash', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('sim CLI --json to stdout', () => {
  // Four strategies of the small scenario make ~73 KB of JSON: more than a pipe takes at once (64 KB), which is
  // where the output used to stop when the CLI exited before the pipe had drained.
  it('writes the whole comparison through a pipe', { timeout: 180_000 }, async () => {
    const args = ['--scenario', 'test-small', '--strategies', 'round-robin,team-eta,pool,load-balanced', '--seed', '3', '--json'];
    const first = await runCli(args);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.length).toBeGreaterThan(65_536);
    const comparison = JSON.parse(first.stdout) as { scenario: string; strategies: Record<string, unknown> };
    expect(comparison.scenario).toBe('test-small');
    expect(Object.keys(comparison.strategies)).toEqual(['round-robin', 'team-eta', 'pool', 'load-balanced']);
  });
});
