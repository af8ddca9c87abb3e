import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { DomainError } from '../domain-error.ts';
import type { TransportMode } from './mapping-provider.ts';

/** How the offline provider turns a straight line into a road estimate for one transport mode. */
export type TransportProfile = {
  /** Average door-to-door speed, km/h: stops, lights and parking included, not the speed limit. */
  speed_kmh: number;
  /** Road distance ÷ great-circle distance: streets are not straight lines. */
  detour_factor: number;
};

/**
 * Urban averages, so a first ETA is plausible before a site tunes them. Road vehicles detour more (one-way
 * streets, no cutting through parks) than bikes and walkers.
 */
export const DEFAULT_TRANSPORT_PROFILES: Readonly<Record<TransportMode, Readonly<TransportProfile>>> = {
  car: { speed_kmh: 40, detour_factor: 1.3 },
  van: { speed_kmh: 35, detour_factor: 1.3 },
  truck: { speed_kmh: 30, detour_factor: 1.3 },
  scooter: { speed_kmh: 30, detour_factor: 1.3 },
  bike: { speed_kmh: 15, detour_factor: 1.2 },
  on_foot: { speed_kmh: 5, detour_factor: 1.2 },
};

/** Enough for 10,000 drivers × 100 jobs, small enough that one request cannot take gigabytes (two number[][]). */
export const DEFAULT_MAX_MATRIX_CELLS = 1_000_000;

const Profile = Type.Object(
  {
    speed_kmh: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 300 })),
    detour_factor: Type.Optional(Type.Number({ minimum: 1, maximum: 5 })),
  },
  { additionalProperties: false },
);

/** The offline provider's part of a site's mapping integration config; every key optional. */
export const OfflineMappingConfigSchema = Type.Object(
  {
    profiles: Type.Optional(
      Type.Object(
        {
          car: Type.Optional(Profile),
          van: Type.Optional(Profile),
          truck: Type.Optional(Profile),
          scooter: Type.Optional(Profile),
          bike: Type.Optional(Profile),
          on_foot: Type.Optional(Profile),
        },
        { additionalProperties: false },
      ),
    ),
    max_matrix_cells: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
  },
  { additionalProperties: false },
);
export type OfflineMappingConfig = Static<typeof OfflineMappingConfigSchema>;

export type ResolvedOfflineConfig = {
  profiles: Record<TransportMode, TransportProfile>;
  maxMatrixCells: number;
};

const validator = Compile(OfflineMappingConfigSchema);

/**
 * Validates a config (it may come from a site's free-form integration settings) and fills in the defaults.
 * @throws DomainError 400 INVALID_MAPPING_CONFIG naming the first bad key (e.g. `profiles.car.speed_kmh`)
 */
export function resolveOfflineConfig(raw: unknown): ResolvedOfflineConfig {
  if (!validator.Check(raw)) {
    const errors = validator.Errors(raw);
    // The deepest error names the offending key; the parent's "additional properties" one only names the object.
    const first = errors.find((e) => e.instancePath !== '') ?? errors[0];
    const field = first?.instancePath.replace(/^\//, '').replaceAll('/', '.') || 'config';
    throw DomainError.invalid('INVALID_MAPPING_CONFIG', `mapping config ${field}: ${first?.message ?? 'invalid'}`, field);
  }
  const config: OfflineMappingConfig = raw;
  const profiles = {} as Record<TransportMode, TransportProfile>;
  for (const [mode, defaults] of Object.entries(DEFAULT_TRANSPORT_PROFILES) as [TransportMode, TransportProfile][]) {
    const override = config.profiles?.[mode];
    profiles[mode] = {
      speed_kmh: override?.speed_kmh ?? defaults.speed_kmh,
      detour_factor: override?.detour_factor ?? defaults.detour_factor,
    };
  }
  return { profiles, maxMatrixCells: config.max_matrix_cells ?? DEFAULT_MAX_MATRIX_CELLS };
}
