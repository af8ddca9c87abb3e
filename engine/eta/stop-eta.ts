import type { LatLng, MappingProvider, TransportMode } from '../mapping/mapping-provider.ts';
import type { ItineraryStop } from './eta-itinerary.ts';

/** A stop's estimate from a driver's position: cumulative over every stop visited before it (their service included). */
export type StopEstimate = {
  stop: ItineraryStop;
  arrivalAt: Date;
  completionAt: Date;
  /** Whole meters from the driver's position along the visit order. */
  cumulativeDistanceMeters: number;
  /** Whole seconds from now until arrival: travel, the service times of earlier stops, and waits for windows. */
  cumulativeDurationSeconds: number;
  /** Of those, the seconds spent waiting for windows to open (this stop's and earlier ones'): 0 when none. */
  waitedSeconds: number;
  /**
   * Whether this stop (or an earlier one) waits for its route's service day to begin: its arrival is then the day's
   * first minute, not a time the driver is heading for, and no "arriving in ..." notice may be based on it.
   */
  awaitsRouteDay: boolean;
};

/**
 * Drives the stops in the order given from `origin`, leaving now, through the site's mapping provider (one route
 * request, however many stops). Arrival is now plus the cumulative duration, but never before the stop's window
 * opens (`complete_after`), nor before its route's service day begins (a route of tomorrow not yet started): a
 * driver there sooner waits, and every later stop moves by the wait. Without that, a
 * stop of tomorrow's window that the driver passes today was "10 minutes away", and its customer was told so (once:
 * the real notice tomorrow never went). Completion adds the stop's service time.
 * @throws DomainError from the provider (502 when a remote engine fails)
 */
export async function estimateStops(mapping: MappingProvider, origin: LatLng, mode: TransportMode, stops: ItineraryStop[], now: Date): Promise<StopEstimate[]> {
  if (stops.length === 0) return [];
  const route = await mapping.route({
    waypoints: [{ lat: origin.lat, lng: origin.lng }, ...stops.map((s) => ({ id: s.stopId, lat: s.lat, lng: s.lng, service_seconds: s.serviceSeconds }))],
    mode,
    departure_time: now,
  });
  let waitedMs = 0;
  let awaitsRouteDay = false;
  return stops.map((stop, i) => {
    const leg = route.legs[i]!;
    const drivenAt = now.getTime() + Math.round(leg.cumulative_duration_seconds) * 1000 + waitedMs;
    const dayStart = stop.routeDayStart?.getTime() ?? 0;
    // The day has not begun yet (not only "arrival pushed to it": a drive that crosses midnight is not one either).
    awaitsRouteDay ||= dayStart > now.getTime();
    const arrivalMs = Math.max(drivenAt, stop.completeAfter?.getTime() ?? 0, dayStart);
    waitedMs += arrivalMs - drivenAt;
    const arrivalAt = new Date(arrivalMs);
    return {
      stop,
      arrivalAt,
      completionAt: new Date(arrivalMs + stop.serviceSeconds * 1000),
      cumulativeDistanceMeters: Math.round(leg.cumulative_distance_meters),
      cumulativeDurationSeconds: Math.round((arrivalMs - now.getTime()) / 1000),
      waitedSeconds: Math.round(waitedMs / 1000),
      awaitsRouteDay,
    };
  });
}
