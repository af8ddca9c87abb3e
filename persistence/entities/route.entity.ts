import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { PersistedEntitySnapshot } from '../../machines/entity-snapshot.ts';
import { siteFilter, timestamps } from './columns.ts';

/**
 * A route: one driver's (and vehicle's) ordered run of jobs for a service day, a persisted actor like jobs and
 * stops. `workflowStateId`, `phase` and `snapshot` change only through the engine's command path.
 */
export const RouteSchema = defineEntity({
  name: 'Route',
  tableName: 'route',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    name: p.string(),
    workflowId: p.string(),
    workflowStateId: p.string(),
    phase: p.string(),
    /** Optimistic lock: every update is `... where version = ?`, and bumps it. */
    version: p.integer().version(),
    snapshot: p.json<PersistedEntitySnapshot>(),
    driverUserId: p.string().nullable(),
    vehicleId: p.string().nullable(),
    teamId: p.string().nullable(),
    /** `YYYY-MM-DD`, the day the route is driven. */
    serviceDate: p.string(),
    cancellationNotes: p.text().nullable(),
    createdByUserId: p.string().nullable(),
    startedAt: p.datetime().nullable(),
    completedAt: p.datetime().nullable(),
    ...timestamps(),
  },
});

export type Route = InferEntity<typeof RouteSchema>;

/** A stop's place in its route's order (the stop's job is on that route). */
export const RouteStopSchema = defineEntity({
  name: 'RouteStop',
  tableName: 'route_stop',
  filters: siteFilter,
  properties: {
    stopId: p.string().primary(),
    siteId: p.string(),
    routeId: p.string(),
    jobId: p.string(),
    position: p.integer(),
  },
});

export type RouteStop = InferEntity<typeof RouteStopSchema>;
