import { planFor } from '../../sim/scenario-loader.ts';
import { parseStrategies, type StrategyName } from '../../sim/strategies.ts';

type DayValues = { strategy: string; drivers: string; jobs: string; hours: string };

/**
 * The command-line options that size the simulators' bench day (`bench-day`, seed 42), shared by bench/sim.ts and its
 * diagnostics: one strategy, the fleet, the demand and the day's length. `--hours 1.2 --jobs 500` keeps the full
 * day's load per driver at a tenth of its length.
 */
export function benchDayOptions(defaults: { jobs: string; hours: string }) {
  return {
    strategy: { type: 'string', default: 'team-eta' },
    drivers: { type: 'string', default: '200' },
    jobs: { type: 'string', default: defaults.jobs },
    hours: { type: 'string', default: defaults.hours },
  } as const;
}

/** The day those options describe, and its strategy. */
export function benchDay(values: DayValues): { plan: ReturnType<typeof planFor>; strategy: StrategyName } {
  const hours = Number(values.hours);
  const plan = planFor('bench-day', 42, { drivers: Number(values.drivers), jobs: Number(values.jobs), ...(hours === 12 ? {} : { hours }) });
  const [strategy] = parseStrategies(values.strategy);
  return { plan, strategy: strategy! };
}
