/** A one-line progress bar on stderr (redrawn in place on a terminal; a line per strategy otherwise). */
export function createProgress(enabled: boolean): { update(label: string, done: number): void; done(label: string, note: string): void } {
  const tty = process.stderr.isTTY === true;
  let last = '';
  return {
    update(label, done) {
      if (!enabled || !tty) return;
      const width = 30;
      const filled = Math.round(done * width);
      const line = `${label.padEnd(16)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.round(done * 100)).padStart(3)}%`;
      if (line !== last) process.stderr.write(`\r${line}`);
      last = line;
    },
    done(label, note) {
      if (!enabled) return;
      process.stderr.write(`${tty ? '\r' : ''}${label.padEnd(16)} done ${note}${' '.repeat(20)}\n`);
      last = '';
    },
  };
}
