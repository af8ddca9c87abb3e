import { readFileSync } from 'node:fs';
import type { Plan, PlannedDriver } from './plan.ts';
import type { Scenario } from './scenario.schema.ts';

/** One GPS fix of a recorded driver. */
type Fix = { driver: string; at: number; lat: number; lng: number };

/**
 * Turns recorded GPS traces into a plan the simulator can replay: one driver per trace, on shift from its first fix
 * to its last, who reports each fix at its recorded time (in process on the virtual clock, live through the driver
 * socket). GPX (one `<trk>` per driver, `<trkpt lat lon><time>`) and CSV (`driver,time,lat,lng` with a header;
 * `lon` is accepted for `lng`) are read.
 */
export function importTraces(file: string): Plan {
  const text = readFileSync(file, 'utf8');
  const fixes = file.toLowerCase().endsWith('.gpx') ? parseGpx(text) : parseCsv(text);
  if (fixes.length === 0) throw new Error(`${file}: no GPS fixes found`);
  const start = Math.min(...fixes.map((f) => f.at));
  const end = Math.max(...fixes.map((f) => f.at));
  const names = [...new Set(fixes.map((f) => f.driver))].sort();
  const byName = new Map(names.map((name, i) => [name, `d${String(i + 1).padStart(3, '0')}`]));
  const tracks: Record<string, [number, number, number][]> = {};
  for (const fix of [...fixes].sort((a, b) => a.at - b.at)) {
    const name = byName.get(fix.driver)!;
    (tracks[name] ??= []).push([Math.round((fix.at - start) / 1000), fix.lat, fix.lng]);
  }
  const drivers: PlannedDriver[] = names.map((original) => {
    const track = tracks[byName.get(original)!]!;
    return { name: byName.get(original)!, start: { lat: track[0]![1], lng: track[0]![2] }, shiftStart: track[0]![0], shiftEnd: track.at(-1)![0] + 1 };
  });
  const lats = fixes.map((f) => f.lat);
  const lngs = fixes.map((f) => f.lng);
  const durationS = Math.max(1, Math.ceil((end - start) / 1000) + 1);
  const scenario: Scenario = {
    name: 'recorded-traces',
    description: `GPS traces of ${names.length} drivers imported from ${file}`,
    day: { start: new Date(start).toISOString(), duration_s: durationS },
    area: { bbox: [Math.min(...lngs), Math.min(...lats), Math.max(...lngs), Math.max(...lats)] },
    fleet: {
      drivers: names.length,
      shifts: [{ start_s: 0, end_s: durationS, share: 1 }],
      start: 'uniform',
      vehicle: 'car',
      speed_profile: [{ from_s: 0, kmh: 30 }],
      detour_factor: 1.3,
      acceptance: { offer_accept_rate: 1, offer_response_s: [5, 30], pool_claim_delay_s: [5, 30], pool_radius_m: 5000, max_pickup_m: 50_000 },
      pay: { per_job_cents: 0, per_km_cents: 0 },
    },
    demand: { jobs: 0, arrival_weights: [1], pickup: { kind: 'uniform' }, dropoff: { kind: 'uniform' }, pickup_window_s: 1, dropoff_window_s: 1, service_s: { pickup: [0, 0], dropoff: [0, 0] } },
    site: { require_confirmation: false, retry_s: 60, max_returns: 1 },
  };
  return { scenario, seed: 0, drivers, jobs: [], tracks };
}

function parseGpx(text: string): Fix[] {
  const fixes: Fix[] = [];
  const tracks = text.split(/<trk[\s>]/).slice(1);
  tracks.forEach((track, index) => {
    const driver = /<name>([^<]*)<\/name>/.exec(track)?.[1]?.trim() || `track-${index + 1}`;
    for (const match of track.matchAll(/<trkpt\b([^>]*)>([\s\S]*?)<\/trkpt>/g)) {
      const lat = Number(/lat="([^"]+)"/.exec(match[1]!)?.[1]);
      const lng = Number(/lon="([^"]+)"/.exec(match[1]!)?.[1]);
      const at = Date.parse(/<time>([^<]+)<\/time>/.exec(match[2]!)?.[1] ?? '');
      if (Number.isFinite(lat) && Number.isFinite(lng) && Number.isFinite(at)) fixes.push({ driver, at, lat, lng });
    }
  });
  return fixes;
}

function parseCsv(text: string): Fix[] {
  const [head, ...rows] = text.trim().split(/\r?\n/);
  const columns = (head ?? '').split(',').map((c) => c.trim().toLowerCase());
  const col = (...names: string[]) => columns.findIndex((c) => names.includes(c));
  const [driverCol, timeCol, latCol, lngCol] = [col('driver', 'driver_id', 'id'), col('time', 'timestamp', 'recorded_at'), col('lat', 'latitude'), col('lng', 'lon', 'longitude')];
  if ([driverCol, timeCol, latCol, lngCol].some((i) => i < 0)) throw new Error('a trace CSV needs the columns driver, time, lat, lng');
  return rows
    .map((row) => row.split(',').map((cell) => cell.trim()))
    .map((cells) => ({ driver: cells[driverCol]!, at: Date.parse(cells[timeCol]!), lat: Number(cells[latCol]), lng: Number(cells[lngCol]) }))
    .filter((fix) => fix.driver && Number.isFinite(fix.at) && Number.isFinite(fix.lat) && Number.isFinite(fix.lng));
}
