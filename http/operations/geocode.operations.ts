import { Type } from 'typebox';
import { ApiError } from '../errors.ts';
import { defineOperation } from '../operation.ts';
import { DataResponse, Point } from '../schemas/common.schema.ts';
import { siteMappingProvider } from '../site-mapping.ts';

const GeocodeQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'free-text address to look up' })),
    lat: Type.Optional(Type.Number({ minimum: -90, maximum: 90, description: 'with lng: the address at this point' })),
    lng: Type.Optional(Type.Number({ minimum: -180, maximum: 180 })),
  },
  { additionalProperties: false },
);

const GeocodeMatch = Type.Object({ point: Point, label: Type.String() }, { additionalProperties: false });

/**
 * `GET /geocode` (DESIGN's path map, beside /address): the site's geocoder for a form that lets people pick an
 * address before it is stored. `q` looks an address up (best first); `lat` + `lng` gives the address at a point (one
 * match, or none). The same provider `POST /address` uses for addresses given without a point.
 */
export const geocodeOperations = [
  defineOperation({
    id: 'geocode.search',
    method: 'GET',
    path: '/geocode',
    summary: 'Candidate points for an address (q), or the address at a point (lat, lng)',
    description:
      "Through the site's mapping integration (nominatim). A site without a geocoder answers 422 GEOCODING_UNAVAILABLE; a geocoder that fails, 502 MAPPING_PROVIDER_ERROR. Give q, or lat and lng: not both, not neither (400).",
    tag: 'Customers',
    access: 'address.write',
    host: 'site',
    query: GeocodeQuery,
    response: DataResponse(Type.Array(GeocodeMatch)),
    handler: async (ctx) => {
      const { q, lat, lng } = ctx.query;
      const reverse = lat !== undefined || lng !== undefined;
      if (q !== undefined && reverse) throw ApiError.validation([{ field: 'q', message: 'give q, or lat and lng, not both' }]);
      if (q === undefined && !reverse) throw ApiError.validation([{ field: 'q', message: 'give q, or lat and lng' }]);
      const provider = await siteMappingProvider(ctx);
      if (q !== undefined) return { data: await provider.geocode(q) };
      if (lat === undefined || lng === undefined) throw ApiError.validation([{ field: lat === undefined ? 'lat' : 'lng', message: 'lat and lng go together' }]);
      const match = await provider.reverseGeocode({ lat, lng });
      return { data: match ? [match] : [] };
    },
  }),
];
