import { buildComparison, type Comparison } from './comparison.ts';
import { startInProcessSite } from './in-process.ts';
import type { StrategyResult } from './metrics.ts';
import type { Plan } from './plan.ts';
import { createRecorder, type Recorder } from './recording.ts';
import { runStrategy } from './runner.ts';
import { setUpFleet } from './setup-fleet.ts';
import { SimDatabases } from './sim-database.ts';
import { strategyAdapter, type StrategyName } from './strategies.ts';

export type SimulateOptions = {
  record?: boolean;
  /** Progress of the strategy being run: its name and the share of the day done. */
  onProgress?: (strategy: string, done: number) => void;
  onLog?: (line: string) => void;
  /** Where run databases come from (tests pass the suite's template); default: a template of its own. */
  databases?: SimDatabases;
};

export type Simulation = { comparison: Comparison; recorders: Recorder[]; wallMs: Record<string, number> };

/**
 * Runs each strategy in process on the same plan, each on a fresh database (same empty site, same fleet, same
 * demand), one after the other. Wall-clock times are returned beside the comparison, never inside it.
 */
export async function simulateInProcess(plan: Plan, strategies: StrategyName[], options: SimulateOptions = {}): Promise<Simulation> {
  const databases = options.databases ?? new SimDatabases();
  const results: [string, StrategyResult][] = [];
  const recorders: Recorder[] = [];
  const wallMs: Record<string, number> = {};
  try {
    for (const name of strategies) {
      const started = performance.now();
      // The server's own error lines, so a failed run says why the engine answered 500.
      const serverErrors: string[] = [];
      const onLog = (line: string) => {
        if (line.includes('"level":50')) serverErrors.push(line.trim().slice(0, 2000));
        options.onLog?.(line);
      };
      const site = await startInProcessSite(databases, new Date(plan.scenario.day.start), onLog);
      try {
        const fleet = await setUpFleet(site.api, plan, 'sim', site.signIn);
        const recorder = options.record ? createRecorder(plan, name) : null;
        site.api.calls.clear();
        const result = await runStrategy({
          plan,
          api: site.api,
          fleet,
          strategy: strategyAdapter(name),
          timeline: site.timeline,
          recorder,
          afterJobCreated: site.afterJobCreated,
          createJobsAhead: true,
          onProgress: (done) => options.onProgress?.(name, done),
        });
        results.push([name, result]);
        if (recorder) recorders.push(recorder);
      } catch (error) {
        if (error instanceof Error && serverErrors.length > 0) error.message += `\nserver log: ${serverErrors.at(-1)}`;
        throw error;
      } finally {
        await site.close();
      }
      wallMs[name] = Math.round(performance.now() - started);
    }
  } finally {
    if (!options.databases) await databases.close();
  }
  return { comparison: buildComparison(plan, results), recorders, wallMs };
}
