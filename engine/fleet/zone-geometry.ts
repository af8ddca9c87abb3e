import { booleanPointInPolygon } from '@turf/boolean-point-in-polygon';
import { booleanValid } from '@turf/boolean-valid';
import type { Position, ZoneGeometry } from '../../persistence/entities/zone.entity.ts';
import { DomainError } from '../domain-error.ts';

/**
 * Most vertices one zone may have in all. The self-intersection check is quadratic per ring, and every job creation
 * tests its stops against the site's banned zones, so a zone stays a hand-drawn area, not a coastline.
 */
export const MAX_ZONE_VERTICES = 5000;

/**
 * Checks what the schema cannot: every ring closed, no ring crossing itself, every hole's vertices within its shell,
 * and the shape valid for turf (rings of 4+ positions, no spikes, a hole not crossing its shell). turf's check
 * misses a plain bowtie and a hole lying wholly outside its shell, hence our own tests for those.
 * Latitudes too (positions are [lng, lat]); the longitude range and ring sizes are the schema's.
 * @throws DomainError 400 INVALID_GEOMETRY naming the field `geometry`
 */
export function assertValidGeometry(geometry: ZoneGeometry): void {
  const polygons = geometry.type === 'Polygon' ? [geometry.coordinates] : geometry.coordinates;
  const rings = polygons.flat();
  const vertices = rings.reduce((sum, ring) => sum + ring.length, 0);
  if (vertices > MAX_ZONE_VERTICES) invalid(`The zone has ${vertices} vertices; at most ${MAX_ZONE_VERTICES} are allowed`);
  if (rings.some((ring) => ring.some(([, lat]) => lat < -90 || lat > 90))) invalid('A latitude is outside -90..90: positions are [lng, lat]');
  for (const [index, ring] of rings.entries()) {
    if (!samePosition(ring[0]!, ring[ring.length - 1]!)) invalid(`Ring ${index} is not closed: its last position must repeat its first`);
    if (crossesItself(ring)) invalid(`Ring ${index} crosses itself`);
  }
  for (const [shell, ...holes] of polygons) {
    const outer = { type: 'Polygon' as const, coordinates: [shell!] };
    if (holes.some((hole) => hole.some((position) => !booleanPointInPolygon(position, outer)))) invalid('A hole lies outside its shell');
  }
  if (!booleanValid(geometry)) invalid('The geometry is not a valid polygon (a spike, a puncture or a hole crossing its shell)');
}

function invalid(message: string): never {
  throw DomainError.invalid('INVALID_GEOMETRY', message, 'geometry');
}

function samePosition(a: Position, b: Position): boolean {
  return a[0] === b[0] && a[1] === b[1];
}

/** Whether two non-adjacent edges of a closed ring meet (cross, touch or overlap). */
function crossesItself(ring: Position[]): boolean {
  const edges = ring.length - 1;
  for (let i = 0; i < edges; i += 1) {
    for (let j = i + 2; j < edges; j += 1) {
      if (i === 0 && j === edges - 1) continue; // the last edge joins the first at the closing position
      if (segmentsMeet(ring[i]!, ring[i + 1]!, ring[j]!, ring[j + 1]!)) return true;
    }
  }
  return false;
}

function segmentsMeet(p1: Position, p2: Position, q1: Position, q2: Position): boolean {
  const d1 = orientation(q1, q2, p1);
  const d2 = orientation(q1, q2, p2);
  const d3 = orientation(p1, p2, q1);
  const d4 = orientation(p1, p2, q2);
  if (d1 * d2 < 0 && d3 * d4 < 0) return true;
  return (
    (d1 === 0 && onSegment(q1, q2, p1)) ||
    (d2 === 0 && onSegment(q1, q2, p2)) ||
    (d3 === 0 && onSegment(p1, p2, q1)) ||
    (d4 === 0 && onSegment(p1, p2, q2))
  );
}

function orientation(a: Position, b: Position, c: Position): number {
  return Math.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
}

/** For c collinear with a-b: whether it lies within the segment's bounding box. */
function onSegment(a: Position, b: Position, c: Position): boolean {
  return Math.min(a[0], b[0]) <= c[0] && c[0] <= Math.max(a[0], b[0]) && Math.min(a[1], b[1]) <= c[1] && c[1] <= Math.max(a[1], b[1]);
}
