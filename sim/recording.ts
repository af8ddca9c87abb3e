import { readFileSync, writeFileSync } from 'node:fs';
import type { Plan, PlannedJob } from './plan.ts';

/**
 * A run as JSON lines: a header (scenario, seed, strategy), the plan (fleet and jobs), then one line per event
 * in virtual time, including every position a driver reported. A recording replays its plan exactly (`--replay`).
 */
export type Recorder = {
  event(t: number, type: string, fields: Record<string, unknown>): void;
  lines(): string[];
};

export function createRecorder(plan: Plan, strategy: string): Recorder {
  const lines = [
    JSON.stringify({ type: 'header', format: 'dispatch-sim/1', scenario: plan.scenario.name, seed: plan.seed, strategy }),
    JSON.stringify({ type: 'plan', scenario: plan.scenario, drivers: plan.drivers, jobs: plan.jobs, ...(plan.bestKnown ? { best_known: plan.bestKnown } : {}), ...(plan.tracks ? { tracks: plan.tracks } : {}) }),
  ];
  return {
    event(t, type, fields) {
      lines.push(JSON.stringify({ t, type, ...fields }));
    },
    lines: () => lines,
  };
}

/** A plan alone as a recording (e.g. imported GPS traces), ready for `--scenario file.jsonl`. */
export function writePlanRecording(path: string, plan: Plan): void {
  writeRecording(path, [createRecorder(plan, 'recorded')]);
}

export function writeRecording(path: string, recorders: Recorder[]): void {
  writeFileSync(path, recorders.flatMap((r) => r.lines()).join('\n') + '\n');
}

/** The plan of a recording (the first plan line), to run it again with any strategy, in process or live. */
export function readRecordedPlan(path: string): Plan {
  const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
  const header = JSON.parse(lines[0] ?? '{}') as { format?: string; seed?: number };
  if (header.format !== 'dispatch-sim/1') throw new Error(`${path} is not a simulator recording (no dispatch-sim/1 header)`);
  const planLine = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.type === 'plan');
  if (!planLine) throw new Error(`${path} has no plan line`);
  // Recordings made before drop-offs had a ready time carry none: theirs could start on arrival.
  type RecordedJob = Omit<PlannedJob, 'dropoffReady'> & { dropoffReady?: number };
  const plan = planLine as unknown as Omit<Plan, 'seed' | 'jobs'> & { jobs: RecordedJob[]; best_known?: Plan['bestKnown'] };
  return {
    scenario: plan.scenario,
    seed: header.seed ?? 0,
    drivers: plan.drivers,
    jobs: plan.jobs.map((job) => ({ ...job, dropoffReady: job.dropoffReady ?? job.createdAt })),
    ...(plan.best_known ? { bestKnown: plan.best_known } : {}),
    ...(plan.tracks ? { tracks: plan.tracks } : {}),
  };
}
