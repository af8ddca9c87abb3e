import type { LatLng, MappingProvider, TransportMode } from '../mapping/mapping-provider.ts';
import type { ItineraryStop } from './eta-itinerary.ts';

/** A stop's estimate from a driver's position: cumulative over every stop visited before it (their service included). */
export type StopEstimate = {
  stop: ItineraryStop;
  arrivalAt: Date;
  completionAt: Date;
  /** Whole meters from the driver's position along the visit order. */
  cumulativeDistanceMeters: number;
  /** Whole seconds from now until arrival: travel plus the service times of earlier stops. */
  cumulativeDurationSeconds: number;
};

/**
 * Drives the stops in the order given from `origin`, leaving now, through the site's mapping provider (one route
 * request, however many stops). Arrival is now plus the cumulative duration; completion adds the stop's service time.
 * @throws DomainError from the provider (502 when a remote engine fails)
 */
export async function estimateStops(mapping: MappingProvider, origin: LatLng, mode: TransportMode, stops: ItineraryStop[], now: Date): Promise<StopEstimate[]> {
  if (stops.length === 0) return [];
  const route = await mapping.route({
    waypoints: [{ lat: origin.lat, lng: origin.lng }, ...stops.map((s) => ({ id: s.stopId, lat: s.lat, lng: s.lng, service_seconds: s.serviceSeconds }))],
    mode,
    departure_time: now,
  });
  return stops.map((stop, i) => {
    const leg = route.legs[i]!;
    const seconds = Math.round(leg.cumulative_duration_seconds);
    const arrivalAt = new Date(now.getTime() + seconds * 1000);
    return {
      stop,
      arrivalAt,
      completionAt: new Date(arrivalAt.getTime() + stop.serviceSeconds * 1000),
      cumulativeDistanceMeters: Math.round(leg.cumulative_distance_meters),
      cumulativeDurationSeconds: seconds,
    };
  });
}
