import type { InstanceClass } from './benchmark-instances.ts';

export type RoutingRow = {
  instanceClass: InstanceClass;
  instance: string;
  objective: string;
  vehicles: number;
  bestKnownVehicles: number | undefined;
  cost: number;
  bestKnown: number;
  /** (cost − best known) / best known. */
  gap: number;
  seconds: number;
  unassigned: number;
  feasible: boolean;
};

// Best-knowns are published to 2 decimals, so matching one can read as -0.00%.
const percent = (gap: number) => `${(Math.abs(gap) < 5e-5 ? 0 : gap * 100).toFixed(2)}%`;

/** One row per run, then one average row per class and objective. */
export function formatRoutingTable(rows: RoutingRow[]): string {
  const header = ['class', 'instance', 'objective', 'vehicles', 'best-known veh.', 'cost', 'best-known', 'gap', 'time s', 'unassigned'];
  const cells = rows.map((row) => [
    row.instanceClass,
    row.instance,
    row.objective,
    String(row.vehicles),
    row.bestKnownVehicles === undefined ? '' : String(row.bestKnownVehicles),
    row.cost.toFixed(2),
    row.bestKnown.toFixed(2),
    percent(row.gap),
    row.seconds.toFixed(2),
    String(row.unassigned),
  ]);
  for (const group of averages(rows)) {
    cells.push([group.instanceClass, 'average', group.objective, group.vehicles.toFixed(1), group.bestKnownVehicles, '', '', percent(group.gap), group.seconds.toFixed(2), '']);
  }
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => (i < 3 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

export function averages(rows: RoutingRow[]) {
  const groups = new Map<string, RoutingRow[]>();
  for (const row of rows) {
    const key = `${row.instanceClass}|${row.objective}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  return [...groups.values()].map((group) => {
    const mean = (pick: (row: RoutingRow) => number) => group.reduce((sum, row) => sum + pick(row), 0) / group.length;
    const knownVehicles = group.every((row) => row.bestKnownVehicles !== undefined) ? mean((row) => row.bestKnownVehicles!).toFixed(1) : '';
    return {
      instanceClass: group[0]!.instanceClass,
      objective: group[0]!.objective,
      vehicles: mean((row) => row.vehicles),
      bestKnownVehicles: knownVehicles,
      gap: mean((row) => row.gap),
      seconds: mean((row) => row.seconds),
    };
  });
}
