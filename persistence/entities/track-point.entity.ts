import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter } from './columns.ts';

/**
 * One stored point of a driver's track (throttled history; the current position lives in `driver_state`).
 * Written and read with SQL by `engine/drivers/driver-location.ts` and `driver-track.ts`; mapped here so the schema
 * is known to the ORM.
 */
export const TrackPointSchema = defineEntity({
  name: 'TrackPoint',
  tableName: 'track_point',
  filters: siteFilter,
  properties: {
    siteId: p.string().primary(),
    userId: p.string().primary(),
    recordedAt: p.datetime().primary(),
    lat: p.double(),
    lng: p.double(),
    heading: p.double().nullable(),
    speed: p.double().nullable(),
    accuracy: p.double().nullable(),
    createdAt: p.datetime(),
  },
});

export type TrackPoint = InferEntity<typeof TrackPointSchema>;
