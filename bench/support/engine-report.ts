import type { MemoryResult, RateResult } from './actor-memory.ts';
import type { LoopResult } from './command-load.ts';
import { formatGrid, whole } from './grid.ts';
import type { QueryCount } from './query-counter.ts';

export type CommandRow = LoopResult & { ratioToRaw: number; queries: QueryCount | undefined };

/** The three tables (idle actors, machine operations, command workloads) and the statements behind each command. */
export function formatEngineReport(memory: MemoryResult[], rates: RateResult[], rows: CommandRow[], extraCounts: Record<string, QueryCount> = {}): string {
  const memoryTable = formatGrid(
    ['idle actors', 'actors', 'heap MiB', 'bytes/actor', 'actors/GiB'],
    memory.map((m) => [m.source, whole(m.actors), (m.heapBytes / 2 ** 20).toFixed(1), whole(m.bytesPerActor), whole(m.actorsPerGiB)]),
  );
  const rateTable = formatGrid(['machine operation (no I/O)', 'ops/s'], rates.map((r) => [r.operation, whole(r.perSecond)]));
  const loopTable = formatGrid(
    ['workload', 'ops/s', 'p50 ms', 'p99 ms', 'CPU ms/op', 'PG CPU ms/op', 'WAL KB/op', 'SQL/op (own + relay)', 'ratio to raw'],
    rows.map((r) => {
      const q = r.queries?.perOperation;
      const sql = q ? `${(q.command + q.none).toFixed(1)} + ${q.relay.toFixed(1)}` : '';
      const postgres = r.postgresMsPerOperation === null ? '' : r.postgresMsPerOperation.toFixed(3);
      const wal = r.walKbPerOperation === null ? '' : r.walKbPerOperation.toFixed(2);
      return [r.workload, whole(r.perSecond), r.latencyMs.p50.toFixed(2), r.latencyMs.p99.toFixed(2), r.cpu.msPerOperation.toFixed(3), postgres, wal, sql, `${r.ratioToRaw.toFixed(2)}×`];
    }),
  );
  const counted: [string, QueryCount][] = [
    ...rows.filter((r, i) => r.queries && rows.findIndex((o) => o.queries === r.queries) === i).map((r): [string, QueryCount] => [r.workload, r.queries!]),
    ...Object.entries(extraCounts),
  ];
  const statements = counted.map(([workload, q]) => {
    const lines = q.statements.map((s) => `  ${s.perOperation.toFixed(2)}  [${s.owner}] ${s.statement}`);
    const how = q.concurrency > 1 ? `${q.concurrency} in flight` : 'one at a time';
    return `${workload}: ${q.perOperation.total.toFixed(1)} statements per operation, ${how} (${q.operations} counted)\n${lines.join('\n')}`;
  });
  return [memoryTable, rateTable, loopTable, statements.join('\n')].join('\n\n');
}
