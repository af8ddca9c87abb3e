import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { comparisonTable } from './comparison.ts';
import { simulateLive } from './live.ts';
import { createProgress } from './progress.ts';
import { writePlanRecording, writeRecording } from './recording.ts';
import { importTraces } from './trace-import.ts';
import { renderReport } from './report-html.ts';
import { planFor } from './scenario-loader.ts';
import { simulateInProcess, type Simulation } from './simulate.ts';
import { parseStrategies } from './strategies.ts';

/** Tables and results go to stdout; progress and warnings to stderr. */
const out = (text: string): void => void process.stdout.write(`${text}\n`);

const USAGE = `npm run sim -- [options]
  --scenario <name|file.json|lilim:lc101|run.jsonl>  what to simulate (default lunch-rush; a .jsonl replays a recording)
  --strategies <list>     round-robin,team-eta,team-load,team-round-robin,pool,load-balanced,priority,zone-based
                          (default round-robin,team-eta,pool,load-balanced)
  --seed <n>              demand, fleet and driver behaviour draw (default 42; a recording: its own); the same seed
                          gives byte-identical --json output
  --drivers <n> --jobs <n>  resize the scenario's fleet or demand
  --json [file]           the comparison as JSON (stdout when no file)
  --report <file.html>    a self-contained HTML report with SVG charts
  --record <file.jsonl>   every event and driver position as JSON lines (replay with --scenario file.jsonl)
  --live <url>            drive a running server instead (e.g. http://demo.localhost:3000) with --api-key <admin key>
  --speed <n>             live: virtual seconds per wall second (default 60)
  --stream-every <s>      live: virtual seconds between streamed positions while driving (default 30; 0: stops only)
  --import-traces <file>  convert GPS traces (.gpx or .csv: driver,time,lat,lng) into a replayable recording
                          written to --out (default traces.jsonl); replay it with --scenario traces.jsonl
  --quiet                 no progress bar`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string', default: 'lunch-rush' },
      strategies: { type: 'string', default: 'round-robin,team-eta,pool,load-balanced' },
      seed: { type: 'string' },
      drivers: { type: 'string' },
      jobs: { type: 'string' },
      json: { type: 'string' },
      report: { type: 'string' },
      record: { type: 'string' },
      live: { type: 'string' },
      'api-key': { type: 'string' },
      speed: { type: 'string', default: '60' },
      'stream-every': { type: 'string', default: '30' },
      'import-traces': { type: 'string' },
      out: { type: 'string', default: 'traces.jsonl' },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    allowNegative: false,
    args: normalizeJsonFlag(process.argv.slice(2)),
  });
  if (values.help) {
    out(USAGE);
    return;
  }
  if (values['import-traces']) {
    const imported = importTraces(values['import-traces']);
    writePlanRecording(values.out, imported);
    out(`${imported.drivers.length} drivers, ${Object.values(imported.tracks ?? {}).flat().length} fixes → ${values.out} (replay: npm run sim -- --scenario ${values.out})`);
    return;
  }
  const seed = values.seed === undefined ? undefined : Number(values.seed);
  if (seed !== undefined && !Number.isInteger(seed)) throw new Error('--seed must be an integer');
  const strategies = parseStrategies(values.strategies);
  const plan = planFor(values.scenario, seed, { drivers: optionalInt(values.drivers, '--drivers'), jobs: optionalInt(values.jobs, '--jobs') });
  const progress = createProgress(!values.quiet);
  const onProgress = (strategy: string, done: number) => progress.update(strategy, done);
  let simulation: Simulation;
  if (values.live) {
    if (!values['api-key']) throw new Error('--live needs --api-key (an admin or dispatcher API key of the site)');
    simulation = await simulateLive(plan, strategies, { baseUrl: values.live, apiKey: values['api-key'], speed: Number(values.speed), streamEveryS: Number(values['stream-every']), onProgress, record: Boolean(values.record) });
  } else {
    simulation = await simulateInProcess(plan, strategies, { record: Boolean(values.record), onProgress });
  }
  for (const [name, ms] of Object.entries(simulation.wallMs)) progress.done(name, `in ${(ms / 1000).toFixed(1)} s wall`);
  const json = JSON.stringify(simulation.comparison, null, 2) + '\n';
  // A pipe takes the JSON asynchronously: without waiting, the process.exit below cut it at 64 KB (a full day's is ~600 KB).
  if (values.json === '-') await new Promise<void>((resolve, reject) => process.stdout.write(json, (error) => (error ? reject(error) : resolve())));
  else if (values.json) writeFileSync(values.json, json);
  if (values.json !== '-') out(comparisonTable(simulation.comparison));
  if (values.report) writeFileSync(values.report, renderReport(simulation.comparison));
  if (values.record) writeRecording(values.record, simulation.recorders);
}

/** `--json` alone means stdout: parseArgs wants a value, so a bare flag gets `-`. */
function normalizeJsonFlag(args: string[]): string[] {
  return args.flatMap((arg, i) => (arg === '--json' && (args[i + 1] === undefined || args[i + 1]!.startsWith('--')) ? ['--json', '-'] : [arg]));
}

function optionalInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a positive integer`);
  return n;
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
