import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadLiLim } from './li-lim.ts';
import { generatePlan, type Plan } from './plan.ts';
import { readRecordedPlan } from './recording.ts';
import { parseScenario, type Scenario } from './scenario.schema.ts';

export const SCENARIO_DIR = path.resolve(import.meta.dirname, 'scenarios');

/** A scenario by name (`lunch-rush` → sim/scenarios/lunch-rush.json) or by path to a JSON file. */
export function loadScenario(nameOrPath: string): Scenario {
  const file = existsSync(nameOrPath) ? nameOrPath : path.join(SCENARIO_DIR, `${nameOrPath}.json`);
  if (!existsSync(file)) throw new Error(`no scenario "${nameOrPath}" (looked for ${file})`);
  return parseScenario(JSON.parse(readFileSync(file, 'utf8')) as unknown, file);
}

/**
 * The plan for a run: `lilim:<instance>` loads a Li & Lim instance, a `.jsonl` path replays a recording's plan,
 * anything else is a scenario drawn with the seed.
 */
export function planFor(source: string, seed: number, resize: { drivers?: number; jobs?: number } = {}): Plan {
  if (source.startsWith('lilim:')) {
    if (resize.jobs !== undefined) throw new Error('a Li & Lim instance has its own jobs: --jobs does not apply');
    return loadLiLim(source.slice('lilim:'.length), { drivers: resize.drivers });
  }
  if (source.endsWith('.jsonl')) {
    if (resize.jobs !== undefined || resize.drivers !== undefined) throw new Error('a recording replays its own fleet and jobs: --drivers and --jobs do not apply');
    return readRecordedPlan(source);
  }
  const scenario = loadScenario(source);
  return generatePlan(
    { ...scenario, fleet: { ...scenario.fleet, drivers: resize.drivers ?? scenario.fleet.drivers }, demand: { ...scenario.demand, jobs: resize.jobs ?? scenario.demand.jobs } },
    seed,
  );
}
