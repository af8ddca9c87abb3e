/** A plain-text table: the first column left-aligned (names), the others right-aligned (numbers). */
export function formatGrid(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (values: string[]) => values.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** 12345.6 → "12,346". */
export const whole = (n: number): string => Math.round(n).toLocaleString('en-US');
