import polyline from '@mapbox/polyline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordedEngine, type RecordedEngine } from '../fixtures/mapping/recorded-engine.ts';
import { useTwoSites } from '../support/two-sites.ts';

type One<T> = { data: T };
type Failure = { code: string; error: string; fields?: { field: string }[]; details?: Record<string, unknown> };
type Stop = { kind: string; id: string | null; arrival_time: string | null; departure_time: string | null; stop_duration: number };
type Leg = { from: number; to: number; distance_meters: number; duration_seconds: number; departure_time: string; arrival_time: string };
type Route = {
  provider: string;
  distance_meters: number;
  duration_seconds: number;
  stop_duration_seconds: number;
  total_duration_seconds: number;
  departure_time: string;
  arrival_time: string;
  geometry: string;
  geometry_is_estimate: boolean;
  waypoint_order: string[];
  optimized: boolean;
  stops: Stop[];
  legs: Leg[];
  notes: string[];
};
type SequencedWaypoint = {
  id: string;
  sequence: number;
  arrival_time: string;
  service_start_time: string;
  departure_time: string;
  wait_seconds: number;
  service_time: number;
  window: { start: string; end: string } | null;
  feasible: boolean;
  late_by_seconds: number;
  infeasible_reason: string | null;
};
type Sequence = { provider: string; optimized: boolean; waypoints: SequencedWaypoint[]; end_arrival_time: string; travel_seconds: number; service_seconds: number; wait_seconds: number; infeasible_waypoint_ids: string[]; notes: string[] };

const CONCORDE = { lat: 48.865611, lng: 2.321214 };
const LOUVRE = { lat: 48.8606, lng: 2.3376 };
const RIVOLI = { lat: 48.856612, lng: 2.352181 };
const BASTILLE = { lat: 48.853312, lng: 2.369182 };
const DEPARTURE = '2026-11-21T08:00:00.000Z';
const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;

// The recorded engine runs on loopback, which only tests may let a site's integration dial.
const sites = useTwoSites({ WEBHOOK_ALLOW_LOOPBACK: 'true' });
let engine: RecordedEngine;

beforeAll(async () => {
  engine = await startRecordedEngine({ '/route/v1/': { fixture: 'osrm-route.json' }, '/table/v1/': { fixture: 'osrm-table.json' } });
});
afterAll(() => engine.close());

const routeBody = {
  origin: CONCORDE,
  destination: BASTILLE,
  waypoints: [
    { id: 'louvre', ...LOUVRE, options: { stop_over: false } },
    { id: 'rivoli', ...RIVOLI, options: { stop_duration: 300 } },
  ],
  options: { departure_time: DEPARTURE, transport_mode: 'van' },
};

describe('POST /gis/route', () => {
  it('answers distance, duration, legs between stops, clock times with stop durations and a polyline', async () => {
    const response = await sites.acme.as.dispatcher.post<One<Route>>('/api/gis/route', routeBody);
    expect(response.status).toBe(200);
    const route = response.body.data;
    expect(route).toMatchObject({ provider: 'offline', geometry_is_estimate: true, stop_duration_seconds: 300, waypoint_order: ['louvre', 'rivoli'], optimized: false, departure_time: DEPARTURE });
    // The pass-through waypoint is no stop: two legs, origin → rivoli → destination.
    expect(route.stops.map((s) => [s.kind, s.id])).toEqual([['origin', null], ['waypoint', 'rivoli'], ['destination', null]]);
    expect(route.legs.map((l) => [l.from, l.to])).toEqual([[0, 1], [1, 2]]);
    expect(route.legs[0]!.duration_seconds + route.legs[1]!.duration_seconds).toBe(route.duration_seconds);
    expect(route.total_duration_seconds).toBe(route.duration_seconds + 300);
    const rivoli = route.stops[1]!;
    expect(seconds(DEPARTURE, rivoli.arrival_time!)).toBe(route.legs[0]!.duration_seconds);
    expect(seconds(rivoli.arrival_time!, rivoli.departure_time!)).toBe(300);
    expect(route.legs[1]!.departure_time).toBe(rivoli.departure_time);
    expect(seconds(DEPARTURE, route.arrival_time)).toBe(route.total_duration_seconds);
    // Straight lines through all four points, the pass-through one included.
    expect(polyline.decode(route.geometry)).toEqual([CONCORDE, LOUVRE, RIVOLI, BASTILLE].map((p) => [Number(p.lat.toFixed(5)), Number(p.lng.toFixed(5))]));
  });

  it('departs now by default (the server clock) and is open to drivers', async () => {
    const before = sites.server.clock.now().getTime();
    const response = await sites.acme.as.driver.post<One<Route>>('/api/gis/route', { origin: CONCORDE, destination: BASTILLE });
    expect(response.status).toBe(200);
    const departure = Date.parse(response.body.data.departure_time);
    expect(departure).toBeGreaterThanOrEqual(before);
    expect(departure).toBeLessThanOrEqual(sites.server.clock.now().getTime());
    expect(response.body.data.legs).toHaveLength(1);
  });

  it('orders the waypoints between the fixed origin and destination when asked to optimize', async () => {
    const body = { origin: CONCORDE, destination: BASTILLE, waypoints: [{ id: 'rivoli', ...RIVOLI }, { id: 'louvre', ...LOUVRE }], options: { optimize: true } };
    const response = await sites.acme.as.dispatcher.post<One<Route>>('/api/gis/route', body);
    expect(response.body.data).toMatchObject({ optimized: true, waypoint_order: ['louvre', 'rivoli'] });
    const asGiven = await sites.acme.as.dispatcher.post<One<Route>>('/api/gis/route', { ...body, options: {} });
    expect(asGiven.body.data).toMatchObject({ optimized: false, waypoint_order: ['rivoli', 'louvre'] });
    expect(response.body.data.distance_meters).toBeLessThan(asGiven.body.data.distance_meters);
  });

  it('refuses customers', async () => {
    expect((await sites.acme.as.customer.post<Failure>('/api/gis/route', routeBody)).status).toBe(403);
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['a missing destination', { origin: CONCORDE }, 'VALIDATION_FAILED', 'destination'],
    ['a latitude out of range', { origin: { lat: 91, lng: 2 }, destination: BASTILLE }, 'VALIDATION_FAILED', 'origin.lat'],
    ['an unknown transport mode', { origin: CONCORDE, destination: BASTILLE, options: { transport_mode: 'hovercraft' } }, 'VALIDATION_FAILED', 'options.transport_mode'],
    ['a negative stop duration', { origin: CONCORDE, destination: BASTILLE, waypoints: [{ id: 'a', ...RIVOLI, options: { stop_duration: -1 } }] }, 'VALIDATION_FAILED', 'waypoints.0.options.stop_duration'],
    ['a stop duration on a pass-through waypoint', { origin: CONCORDE, destination: BASTILLE, waypoints: [{ id: 'a', ...RIVOLI, options: { stop_over: false, stop_duration: 60 } }] }, 'STOP_DURATION_WITHOUT_STOP', 'waypoints.0.options.stop_duration'],
    ['a waypoint id used twice', { origin: CONCORDE, destination: BASTILLE, waypoints: [{ id: 'a', ...RIVOLI }, { id: 'a', ...LOUVRE }] }, 'DUPLICATE_WAYPOINT_ID', 'waypoints.1.id'],
    ['avoid features the offline provider cannot honour', { origin: CONCORDE, destination: BASTILLE, options: { avoid_features: ['toll'] } }, 'UNSUPPORTED_AVOID_FEATURES', 'options.avoid_features'],
  ])('refuses %s with 400 naming the field', async (_, body, code, field) => {
    const response = await sites.acme.as.dispatcher.post<Failure>('/api/gis/route', body);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe(code);
    expect(response.body.fields?.map((f) => f.field)).toContain(field);
  });
});

const sequenceBody = {
  start: CONCORDE,
  end: BASTILLE,
  departure_time: DEPARTURE,
  waypoints: [
    { id: 'louvre', ...LOUVRE, service_time: 600, access_window: '' },
    // Opens at 10:00 (site time zone UTC): the van waits.
    { id: 'rivoli', ...RIVOLI, service_time: 300, access_window: '10:00-11:00' },
    // Closed before the van leaves: served anyway, reported late.
    { id: 'marais', lat: 48.8589, lng: 2.3622, access_window: '06:00-07:00,2026-11-21T07:00Z/2026-11-21T07:30Z' },
  ],
};

describe('POST /gis/sequence', () => {
  it('schedules every waypoint with arrival, wait, service and departure, and reports infeasible windows', async () => {
    const response = await sites.acme.as.dispatcher.post<One<Sequence>>('/api/gis/sequence', sequenceBody);
    expect(response.status).toBe(200);
    const plan = response.body.data;
    expect(plan.provider).toBe('offline');
    expect(plan.waypoints.map((w) => w.id).sort()).toEqual(['louvre', 'marais', 'rivoli']);
    expect(plan.waypoints.map((w) => w.sequence)).toEqual([1, 2, 3]);
    const byId = Object.fromEntries(plan.waypoints.map((w) => [w.id, w]));
    expect(byId.rivoli).toMatchObject({ feasible: true, service_start_time: '2026-11-21T10:00:00.000Z', window: { start: '2026-11-21T10:00:00.000Z', end: '2026-11-21T11:00:00.000Z' } });
    expect(byId.rivoli!.wait_seconds).toBe(seconds(byId.rivoli!.arrival_time, '2026-11-21T10:00:00.000Z'));
    expect(seconds(byId.rivoli!.service_start_time, byId.rivoli!.departure_time)).toBe(300);
    expect(byId.marais).toMatchObject({ feasible: false, window: null });
    expect(byId.marais!.late_by_seconds).toBe(seconds('2026-11-21T07:30:00.000Z', byId.marais!.arrival_time));
    expect(byId.marais!.infeasible_reason).toMatch(/last window closed at 2026-11-21T07:30:00.000Z/);
    expect(plan.infeasible_waypoint_ids).toEqual(['marais']);
    expect(plan.service_seconds).toBe(900);
    // The day adds up: travel + service + waiting, from departure to the arrival at the end.
    expect(seconds(DEPARTURE, plan.end_arrival_time)).toBe(plan.travel_seconds + plan.service_seconds + plan.wait_seconds);
  });

  it('serves a waypoint whose window cannot be met with the others on arrival, so the others stay on time', async () => {
    // x and y both open at 10:00 for a minute, half an hour apart: one of them must miss. The order puts x first
    // (it costs nothing there); waiting at x until 10:00 would make y and z late too.
    const body = {
      start: { lat: 48.8, lng: 2.35 },
      end: { lat: 48.96, lng: 2.35 },
      departure_time: '2026-11-21T08:00:00Z',
      waypoints: [
        { id: 'x', lat: 48.8, lng: 2.35, access_window: '2026-11-21T10:00:00Z/2026-11-21T10:01:00Z' },
        { id: 'y', lat: 48.94, lng: 2.35, access_window: '2026-11-21T10:00:00Z/2026-11-21T10:01:00Z' },
        { id: 'z', lat: 48.96, lng: 2.35, access_window: '2026-11-21T10:30:00Z/2026-11-21T10:31:00Z' },
      ],
    };
    const plan = (await sites.acme.as.dispatcher.post<One<Sequence>>('/api/gis/sequence', body)).body.data;
    expect(plan.infeasible_waypoint_ids).toEqual(['x']);
    const byId = Object.fromEntries(plan.waypoints.map((w) => [w.id, w]));
    expect(byId.x).toMatchObject({ feasible: false, wait_seconds: 0, late_by_seconds: 0, window: null });
    expect(byId.x!.infeasible_reason).toMatch(/served on arrival, \d+ s before its window opens at 2026-11-21T10:00:00.000Z/);
    expect(byId.y).toMatchObject({ feasible: true, late_by_seconds: 0 });
    expect(byId.z).toMatchObject({ feasible: true, late_by_seconds: 0 });
  });

  it('finds the best order, west to east across Paris, whatever order the waypoints come in', async () => {
    const marais = { id: 'marais', lat: 48.8589, lng: 2.3622 };
    for (const optimize_for of ['time', 'distance']) {
      const body = { start: CONCORDE, end: BASTILLE, departure_time: DEPARTURE, optimize_for, waypoints: [marais, { id: 'rivoli', ...RIVOLI }, { id: 'louvre', ...LOUVRE }] };
      const plan = (await sites.acme.as.driver.post<One<Sequence>>('/api/gis/sequence', body)).body.data;
      expect(plan.optimized).toBe(true);
      expect(plan.waypoints.map((w) => w.id)).toEqual(['louvre', 'rivoli', 'marais']);
      expect(plan.infeasible_waypoint_ids).toEqual([]);
    }
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['no waypoints', { ...sequenceBody, waypoints: [] }, 'VALIDATION_FAILED', 'waypoints'],
    ['a missing end', { start: CONCORDE, waypoints: sequenceBody.waypoints }, 'VALIDATION_FAILED', 'end'],
    ['a fractional service time', { ...sequenceBody, waypoints: [{ id: 'a', ...RIVOLI, service_time: 1.5 }] }, 'VALIDATION_FAILED', 'waypoints.0.service_time'],
    ['an unknown optimize_for', { ...sequenceBody, optimize_for: 'fun' }, 'VALIDATION_FAILED', 'optimize_for'],
    ['a malformed access window', { ...sequenceBody, waypoints: [{ id: 'a', ...RIVOLI }, { id: 'b', ...LOUVRE, access_window: '9h-11h' }] }, 'INVALID_ACCESS_WINDOW', 'waypoints.1.access_window'],
    ['a waypoint id used twice', { ...sequenceBody, waypoints: [{ id: 'a', ...RIVOLI }, { id: 'a', ...LOUVRE }] }, 'DUPLICATE_WAYPOINT_ID', 'waypoints.1.id'],
  ])('refuses %s with 400 naming the field', async (_, body, code, field) => {
    const response = await sites.acme.as.dispatcher.post<Failure>('/api/gis/sequence', body);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe(code);
    expect(response.body.fields?.map((f) => f.field)).toContain(field);
  });
});

const connectOsrm = (config: Record<string, unknown>) =>
  sites.acme.as.admin.put<unknown>('/api/integration?integration_key=osrm', { config: { base_url: engine.baseUrl, ...config }, is_active: true });

describe("the site's mapping integration", () => {
  it('routes through the OSRM engine a site connected, while another site stays offline', async () => {
    const connected = await connectOsrm({ timeout_ms: 1_000 });
    expect(connected.status).toBe(200);
    const response = await sites.acme.as.dispatcher.post<One<Route>>('/api/gis/route', { origin: CONCORDE, destination: BASTILLE, waypoints: [{ id: 'rivoli', ...RIVOLI }], options: { departure_time: DEPARTURE, avoid_features: ['toll'] } });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ provider: 'osrm', geometry_is_estimate: false, distance_meters: 3750.3, duration_seconds: 499 });
    expect(polyline.decode(response.body.data.geometry)).toHaveLength(14);
    expect(engine.requests.at(-1)!.searchParams.get('exclude')).toBe('toll');
    expect((await sites.globex.as.dispatcher.post<One<Route>>('/api/gis/route', { origin: CONCORDE, destination: BASTILLE })).body.data.provider).toBe('offline');
  });

  it("sequences with the engine's duration matrix, one table call for start, waypoints and end", async () => {
    await connectOsrm({ timeout_ms: 1_000 });
    engine.answer('/table/v1/', { fixture: 'osrm-table-3x3.json' });
    const response = await sites.acme.as.dispatcher.post<One<Sequence>>('/api/gis/sequence', {
      start: CONCORDE,
      end: BASTILLE,
      departure_time: DEPARTURE,
      waypoints: [{ id: 'rivoli', ...RIVOLI, service_time: 120 }],
    });
    expect(response.status).toBe(200);
    expect(engine.requests.at(-1)!.pathname).toBe('/table/v1/driving/2.321214,48.865611;2.352181,48.856612;2.369182,48.853312');
    expect(response.body.data).toMatchObject({ provider: 'osrm', travel_seconds: 302 + 197, service_seconds: 120, end_arrival_time: '2026-11-21T08:10:19.000Z' });
    expect(response.body.data.waypoints[0]).toMatchObject({ id: 'rivoli', arrival_time: '2026-11-21T08:05:02.000Z', departure_time: '2026-11-21T08:07:02.000Z' });
  });

  it('answers 502 MAPPING_PROVIDER_ERROR with the reason when the engine does not answer in time', async () => {
    await connectOsrm({ timeout_ms: 300 });
    engine.answer('/route/v1/', { hang: true });
    const started = performance.now();
    const response = await sites.acme.as.dispatcher.post<Failure>('/api/gis/route', { origin: CONCORDE, destination: BASTILLE });
    expect(performance.now() - started).toBeLessThan(300 + 500);
    expect(response.status).toBe(502);
    expect(response.body).toMatchObject({ code: 'MAPPING_PROVIDER_ERROR', error: 'mapping provider osrm failed: no answer within 300 ms' });
  });
});
