import { Type } from 'typebox';
import { readTrack } from '../../engine/drivers/driver-track.ts';
import { defineOperation } from '../operation.ts';
import { DataResponse, Id, Nullable, Timestamp } from '../schemas/common.schema.ts';
import { requireSite } from '../tenancy.ts';

/** Points returned when the query names no limit. */
const DEFAULT_TRACK_LIMIT = 1000;

const TrackQuery = Type.Object(
  {
    driver_user_id: Id,
    from: Type.Optional(Timestamp),
    to: Type.Optional(Timestamp),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, default: DEFAULT_TRACK_LIMIT, description: 'most points returned (oldest first)' })),
  },
  { additionalProperties: false },
);

const NullableNumber = Nullable(Type.Number());
const TrackPoint = Type.Object(
  { lat: Type.Number(), lng: Type.Number(), heading: NullableNumber, speed: NullableNumber, accuracy: NullableNumber, recorded_at: Timestamp },
  { additionalProperties: false },
);

export const driverTrackOperations = [
  defineOperation({
    id: 'driver.track.get',
    method: 'GET',
    path: '/driver/track',
    summary: "A driver's stored track between from and to (staff)",
    description:
      'Throttled history of reported positions, oldest first: at most one point every TRACK_POINT_INTERVAL_SECONDS unless the driver moved ' +
      'TRACK_POINT_DISTANCE_METERS. Late fixes (an app that was offline) are stored in place; exact repeats never are. ' +
      'The current position is GET /driver/location.',
    tag: 'Drivers',
    access: 'driver.track.read',
    host: 'site',
    query: TrackQuery,
    response: DataResponse(Type.Array(TrackPoint)),
    handler: async (ctx) => {
      const siteId = requireSite(ctx.site).id;
      const { driver_user_id: driverUserId, from, to, limit } = ctx.query;
      // Validation filled in the default; optional in the schema only so that clients need not send it.
      return { data: await ctx.transaction((em) => readTrack(em, siteId, { driverUserId, from, to, limit: limit ?? DEFAULT_TRACK_LIMIT })) };
    },
  }),
];
