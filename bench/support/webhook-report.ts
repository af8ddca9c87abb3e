import { formatGrid, whole } from './grid.ts';
import type { Percentiles } from './open-loop.ts';

/** A throughput row (count and rate; ratio to the raw BullMQ baseline) or a latency row (achieved rate and percentiles). */
export type ReportRow =
  | { target: string; count: number; perSecond: number; ratio: number }
  | { target: string; count: number; perSecond: number; latencyMs: Percentiles };

const fixed = (n: number): string => n.toFixed(1);
const latency = (p: Percentiles): string[] => [fixed(p.p50), fixed(p.p95), fixed(p.p99), fixed(p.max)];

/** The results table, then where the webhook latency went, stage by stage. */
export function formatWebhookReport(rows: ReportRow[], stagesTitle: string, stages: Record<string, Percentiles>): string {
  const table = formatGrid(
    ['target', 'events', 'per s', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'ratio to raw'],
    rows.map((row) => [
      row.target, whole(row.count), whole(row.perSecond),
      ...('latencyMs' in row ? [...latency(row.latencyMs), ''] : ['', '', '', '', `${row.ratio.toFixed(2)}×`]),
    ]),
  );
  const stageTable = formatGrid([stagesTitle, 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'], Object.entries(stages).map(([name, p]) => [name, ...latency(p)]));
  return `${table}\n\n${stageTable}`;
}
