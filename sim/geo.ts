/** Plane geometry on the sphere, enough for a simulator: distances in meters, points as {lat, lng}. */
export type LatLng = { lat: number; lng: number };

const EARTH_RADIUS_M = 6_371_008.8;
const toRad = (deg: number): number => (deg * Math.PI) / 180;

/** Meters in one degree of a great circle of the sphere `haversineM` measures on (a degree of latitude, say). */
export const METERS_PER_DEGREE = toRad(EARTH_RADIUS_M);

/** Great-circle distance in meters. */
export function haversineM(a: LatLng, b: LatLng): number {
  const dLat = toRad(b.lat - a.lat);
  const dLng = toRad(b.lng - a.lng);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(toRad(a.lat)) * Math.cos(toRad(b.lat)) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** The point a fraction `f` of the way from a to b (straight in lat/lng: fine at city scale). */
export function interpolate(a: LatLng, b: LatLng, f: number): LatLng {
  return { lat: a.lat + (b.lat - a.lat) * f, lng: a.lng + (b.lng - a.lng) * f };
}

/** A point `distanceM` from `center` in direction `bearingRad`. */
export function offset(center: LatLng, distanceM: number, bearingRad: number): LatLng {
  const dLat = (distanceM * Math.cos(bearingRad)) / 111_320;
  const dLng = (distanceM * Math.sin(bearingRad)) / (111_320 * Math.cos(toRad(center.lat)));
  return { lat: center.lat + dLat, lng: center.lng + dLng };
}

/** Ray casting over a ring of [lng, lat]. */
export function insideRing(point: LatLng, ring: [number, number][]): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i, i += 1) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi > point.lat !== yj > point.lat && point.lng < ((xj - xi) * (point.lat - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Rounds coordinates to 6 decimals (~0.1 m), so JSON output does not carry float noise. */
export function round6(point: LatLng): LatLng {
  return { lat: Math.round(point.lat * 1e6) / 1e6, lng: Math.round(point.lng * 1e6) / 1e6 };
}
