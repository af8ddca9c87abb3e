import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { comparisonTable, latenessCell } from '../sim/comparison.ts';
import { DEFAULT_SEED, planFor } from '../sim/scenario-loader.ts';
import { simulateInProcess } from '../sim/simulate.ts';
import { parseStrategies } from '../sim/strategies.ts';
import { writeResults } from './support/report.ts';
import { benchDay, benchDayOptions } from './support/bench-day.ts';

/** Tables and results go to stdout; progress and warnings to stderr. */
const out = (text: string): void => void process.stdout.write(`${text}\n`);

/**
 * `npm run bench:sim`: (1) simulation speed, a day of 200 drivers and 5,000 jobs for one strategy, as virtual seconds
 * per wall second against real time (goal: the day in under 60 s, ≥ 480×) with the peak memory (goal < 1 GB);
 * (2) online dispatch on the Li & Lim instances, each strategy's distance as a ratio to the best-known offline plan.
 */
const { values } = parseArgs({
  options: {
    ...benchDayOptions({ jobs: '5000', hours: '12' }),
    instances: { type: 'string', default: 'lc101,lr101,lrc101,lc201' },
    strategies: { type: 'string', default: 'round-robin,team-eta,pool,load-balanced' },
    skip: { type: 'string', default: '' },
  },
});
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = os.loadavg()[0]!;
if (loadBefore > 1) progress(`warning: 1-minute load average is ${loadBefore.toFixed(2)} before starting; results will be noisy`);

const results: Record<string, unknown> = { machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, load_before: loadBefore } };

if (!values.skip.includes('speed')) {
  const { plan, strategy } = benchDay(values);
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250);
  let lastShown = -1;
  const sim = await simulateInProcess(plan, [strategy], {
    onProgress: (_name, done) => {
      const tenth = Math.floor(done * 10);
      if (tenth !== lastShown) progress(`speed run: ${tenth * 10}% of the day`);
      lastShown = tenth;
    },
  });
  clearInterval(sampler);
  const result = sim.comparison.strategies[strategy]!;
  const wallS = sim.wallMs[strategy]! / 1000;
  const virtualS = plan.scenario.day.duration_s;
  const calls = Object.values(result.api_calls).reduce((a, b) => a + b, 0);
  const speed = { strategy, drivers: plan.drivers.length, jobs: plan.jobs.length, wall_s: wallS, virtual_s: virtualS, x_real_time: Math.round(virtualS / wallS), api_calls: calls, calls_per_s: Math.round(calls / wallS), peak_rss_mb: Math.round(peakRss / 2 ** 20), completed: result.summary.completed };
  results.speed = speed;
  out(`\nSimulation speed (${speed.drivers} drivers, ${speed.jobs} jobs, ${strategy}, one ${virtualS / 3600} h day)`);
  out(`wall ${wallS.toFixed(1)} s (goal < 60 s) · ${speed.x_real_time}× real time (goal ≥ 480×) · ${calls} REST calls, ${speed.calls_per_s}/s · peak RSS ${speed.peak_rss_mb} MB (goal < 1024) · ${speed.completed} jobs completed`);
}

if (!values.skip.includes('lilim')) {
  const strategies = parseStrategies(values.strategies);
  const rows: Record<string, Record<string, { ratio: number; vehicles: number; late: string; done: string | null }>> = {};
  for (const instance of values.instances.split(',')) {
    // The CLI's default seed, so `npm run sim -- --scenario lilim:<instance>` gives these rows.
    const plan = planFor(`lilim:${instance}`, DEFAULT_SEED);
    const sim = await simulateInProcess(plan, strategies, { onProgress: () => {} });
    progress(comparisonTable(sim.comparison));
    rows[instance] = Object.fromEntries(Object.entries(sim.comparison.strategies).map(([name, r]) => [name, { ratio: r.distance_ratio_to_best_known!, vehicles: r.summary.vehicles_used, late: latenessCell(r.summary), done: r.summary.not_completed === 0 ? null : `${r.summary.completed}/${r.summary.jobs - r.summary.impossible}` }]));
  }
  results.li_lim = rows;
  out('\nLi & Lim: distance driven ÷ best-known offline distance (online dispatch, jobs released when the pickup opens),');
  out('with the vehicles used and the late pickups / deliveries / returns to the depot (a due time bounds the start of service)');
  const header = ['instance', ...strategies];
  out(header.join('  '));
  // A run that left jobs undone drove less than the whole instance needs: its ratio says so beside it.
  const cell = (r: (typeof rows)[string][string] | undefined) => (r ? `${r.ratio.toFixed(2)}× ${r.vehicles} veh late ${r.late}${r.done ? ` (only ${r.done} jobs done)` : ''}` : '');
  for (const [instance, row] of Object.entries(rows)) out([instance, ...strategies.map((s) => cell(row[s]))].join('  '));
}

results.load_after = os.loadavg()[0];
writeResults(path.join(import.meta.dirname, 'results', 'sim.json'), results);
process.exit(0);
