import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadLiLim } from './li-lim.ts';
import { generatePlan, type Plan } from './plan.ts';
import { readRecordedPlan } from './recording.ts';
import { parseScenario, type Scenario } from './scenario.schema.ts';

export const SCENARIO_DIR = path.resolve(import.meta.dirname, 'scenarios');

/** The seed of a run that names none (the CLI's `--seed` default, and the benchmark's Li & Lim rows). */
export const DEFAULT_SEED = 42;

/** A scenario by name (`lunch-rush` → sim/scenarios/lunch-rush.json) or by path to a JSON file. */
export function loadScenario(nameOrPath: string): Scenario {
  const file = existsSync(nameOrPath) ? nameOrPath : path.join(SCENARIO_DIR, `${nameOrPath}.json`);
  if (!existsSync(file)) throw new Error(`no scenario "${nameOrPath}" (looked for ${file})`);
  return parseScenario(JSON.parse(readFileSync(file, 'utf8')) as unknown, file);
}

/**
 * The plan for a run: `lilim:<instance>` loads a Li & Lim instance, a `.jsonl` path replays a recording's plan,
 * anything else is a scenario drawn with the seed. A Li & Lim instance and a recording have fixed jobs, but the seed
 * still draws the drivers' behaviour (pool claim delays, offer answers), so it is passed on to them too; a recording
 * replayed without a seed keeps the one it was recorded with, so it replays that run.
 */
export function planFor(source: string, seed: number | undefined, resize: { drivers?: number; jobs?: number; hours?: number } = {}): Plan {
  if (source.startsWith('lilim:')) {
    if (resize.jobs !== undefined || resize.hours !== undefined) throw new Error('a Li & Lim instance has its own jobs and horizon: --jobs and --hours do not apply');
    return loadLiLim(source.slice('lilim:'.length), { drivers: resize.drivers, seed: seed ?? DEFAULT_SEED });
  }
  if (source.endsWith('.jsonl')) {
    if (resize.jobs !== undefined || resize.drivers !== undefined || resize.hours !== undefined) throw new Error('a recording replays its own fleet and jobs: --drivers, --jobs and --hours do not apply');
    const recorded = readRecordedPlan(source);
    return seed === undefined ? recorded : { ...recorded, seed };
  }
  const scenario = resize.hours === undefined ? loadScenario(source) : shortened(loadScenario(source), resize.hours);
  return generatePlan(
    { ...scenario, fleet: { ...scenario.fleet, drivers: resize.drivers ?? scenario.fleet.drivers }, demand: { ...scenario.demand, jobs: resize.jobs ?? scenario.demand.jobs } },
    seed ?? DEFAULT_SEED,
  );
}

/**
 * The same day squeezed (or stretched) to `hours`: shifts and speed steps keep their share of the day, demand keeps
 * its shape over it. Windows, service times and speeds are unchanged, so a short day with proportionally fewer jobs
 * keeps the full day's load per driver (the benchmark's quick runs).
 */
function shortened(scenario: Scenario, hours: number): Scenario {
  if (!(hours > 0)) throw new Error(`--hours must be a positive number, not ${hours}`);
  const duration = Math.round(hours * 3600);
  const scale = (s: number) => Math.round((s * duration) / scenario.day.duration_s);
  const { fleet } = scenario;
  return {
    ...scenario,
    day: { ...scenario.day, duration_s: duration },
    fleet: {
      ...fleet,
      shifts: fleet.shifts.map((shift) => ({ ...shift, start_s: scale(shift.start_s), end_s: scale(shift.end_s) })),
      speed_profile: fleet.speed_profile.map((step) => ({ ...step, from_s: scale(step.from_s) })),
    },
  };
}
