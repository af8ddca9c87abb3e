import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Measurement } from './load.ts';

export type Row = Measurement & { ratioToRaw: number };

/** The human-readable table: one row per target, ratios against the raw node:http server of the same run. */
export function formatTable(rows: Row[]): string {
  const header = ['target', 'req/s (mean)', '± stddev', 'p50 ms', 'p99 ms', 'ratio to raw'];
  const cells = rows.map((row) => [
    row.target,
    Math.round(row.requestsPerSecond.mean).toLocaleString('en-US'),
    Math.round(row.requestsPerSecond.stddev).toLocaleString('en-US'),
    String(row.latencyMs.p50),
    String(row.latencyMs.p99),
    `${row.ratioToRaw.toFixed(row.ratioToRaw < 0.1 ? 3 : 2)}×`, // the list call is far below 0.1×: keep a digit that moves
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

/** Results as JSON beside the bench (bench/results/ is git-ignored), for regenerating the README's numbers. */
export function writeResults(file: string, content: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(content, null, 2)}\n`);
}
