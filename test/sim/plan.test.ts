import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventQueue } from '../../sim/event-queue.ts';
import { haversineM } from '../../sim/geo.ts';
import { loadLiLim, PDPTW_DIR } from '../../sim/li-lim.ts';
import { generatePlan } from '../../sim/plan.ts';
import { readRecordedPlan, writePlanRecording } from '../../sim/recording.ts';
import { importTraces } from '../../sim/trace-import.ts';
import { createRandom } from '../../sim/random.ts';
import { loadScenario, planFor, SCENARIO_DIR } from '../../sim/scenario-loader.ts';
import { parseScenario } from '../../sim/scenario.schema.ts';

const total = (values: number[]): number => values.reduce((a, b) => a + b, 0);

describe('scenarios and plans', () => {
  it('every shipped scenario validates against the schema', () => {
    const names = readdirSync(SCENARIO_DIR).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, ''));
    expect(names).toEqual(expect.arrayContaining(['lunch-rush', 'parcel-day', 'field-service']));
    for (const name of names) expect(loadScenario(name).name).toBe(name);
  });

  it('a scenario with a bad field is refused naming the path', () => {
    const scenario = { ...loadScenario('lunch-rush'), fleet: { ...loadScenario('lunch-rush').fleet, drivers: 0 } };
    expect(() => parseScenario(scenario, 'edited.json')).toThrow(/edited\.json is invalid:[\s\S]*\/fleet\/drivers/);
  });

  it('the same seed draws the same plan; another seed draws another', () => {
    const scenario = loadScenario('lunch-rush');
    expect(JSON.stringify(generatePlan(scenario, 7))).toBe(JSON.stringify(generatePlan(scenario, 7)));
    expect(JSON.stringify(generatePlan(scenario, 8).jobs)).not.toBe(JSON.stringify(generatePlan(scenario, 7).jobs));
  });

  it('deliberately unreachable jobs are marked impossible before the run, the rest are not', () => {
    const plan = generatePlan(loadScenario('lunch-rush'), 42);
    const impossible = plan.jobs.filter((j) => j.impossible);
    expect(impossible).toHaveLength(3);
    expect(impossible.every((j) => j.impossible === "pickup beyond every driver's range")).toBe(true);
    expect(plan.jobs).toHaveLength(503);
    expect(plan.jobs.map((j) => j.createdAt)).toEqual(plan.jobs.map((j) => j.createdAt).toSorted((a, b) => a - b));
  });

  it('a shorter benchmark day keeps its shifts and its demand in proportion', () => {
    const plan = planFor('bench-day', 42, { drivers: 20, jobs: 500, hours: 1.2 });
    expect(plan.scenario.day.duration_s).toBe(4320);
    // The two 8 h shifts of the 12 h day (0-8 h, 4-12 h) become 0-48 and 24-72 minutes.
    expect(new Set(plan.drivers.map((d) => `${d.shiftStart}-${d.shiftEnd}`))).toEqual(new Set(['0-2880', '1440-4320']));
    expect(plan.jobs).toHaveLength(505);
    expect(plan.jobs.every((j) => j.createdAt < 4320)).toBe(true);
    expect(() => planFor('lilim:lc101', 0, { hours: 1 })).toThrow(/--hours/);
  });

  it('a Li & Lim instance becomes a plan with its pairs as jobs and its best-known distance', () => {
    const plan = loadLiLim('lc101');
    expect(plan.jobs).toHaveLength(53);
    expect(plan.drivers).toHaveLength(25);
    expect(plan.bestKnown).toEqual({ distanceKm: 828.94, vehicles: 10, instance: 'lc101' });
    expect(new Set(plan.drivers.map((d) => JSON.stringify(d.start))).size).toBe(1);
    expect(plan.jobs.every((j) => j.impossible === null && j.pickupReady === j.createdAt)).toBe(true);
  });

  it('one Li & Lim unit is one kilometre as the simulator measures distance, so distances compare with the best known', () => {
    for (const instance of ['lc101', 'lr101']) {
      const rows = readFileSync(path.join(PDPTW_DIR, `${instance}.txt`), 'utf8').trim().split('\n').slice(1).map((line) => line.trim().split(/\s+/).map(Number));
      const byId = new Map(rows.map((row) => [row[0], row]));
      // Each pickup's Euclidean distance to its delivery (columns: id, x, y, ..., pickup, delivery), in units.
      const units = rows.filter((row) => row[0] !== 0 && row[8]! > 0).map((row) => Math.hypot(row[1]! - byId.get(row[8])![1]!, row[2]! - byId.get(row[8])![2]!));
      const km = loadLiLim(instance).jobs.map((job) => haversineM(job.pickup, job.dropoff) / 1000);
      expect(Math.abs(total(km) / total(units) - 1), instance).toBeLessThan(1e-4);
    }
  });
});

describe('simulation kernel', () => {
  it('the event queue pops by time, then in scheduling order', () => {
    const queue = new EventQueue<string>();
    queue.push(5, 'c');
    queue.push(1, 'a');
    queue.push(5, 'd');
    queue.push(1, 'b');
    queue.push(0, 'first');
    expect(Array.from({ length: 5 }, () => queue.pop()!.value)).toEqual(['first', 'a', 'b', 'c', 'd']);
    expect(queue.pop()).toBeUndefined();
  });

  it('the seeded generator repeats itself and its forks are independent', () => {
    const a = createRandom(42);
    const b = createRandom(42);
    const drawsA = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(drawsA);
    expect(createRandom(42).fork('x').next()).not.toBe(createRandom(42).fork('y').next());
    expect(drawsA.every((d) => d >= 0 && d < 1)).toBe(true);
  });
});

describe('recordings and GPS traces', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sim-traces-'));

  it('a recorded plan reads back exactly, so a run can be replayed with any strategy', () => {
    const plan = generatePlan(loadScenario('test-small'), 42);
    const file = path.join(dir, 'run.jsonl');
    writePlanRecording(file, plan);
    expect(readRecordedPlan(file)).toEqual(plan);
    writeFileSync(path.join(dir, 'other.jsonl'), '{"type":"something"}\n');
    expect(() => readRecordedPlan(path.join(dir, 'other.jsonl'))).toThrow(/not a simulator recording/);
  });

  it('the seed reaches Li & Lim and recorded plans, whose jobs are fixed but whose drivers draw their reactions from it', () => {
    expect(planFor('lilim:lc101', 7).seed).toBe(7);
    expect(planFor('lilim:lc101', undefined).seed).toBe(42);
    const file = path.join(dir, 'seeded.jsonl');
    writePlanRecording(file, generatePlan(loadScenario('test-small'), 5));
    expect(planFor(file, 9).seed).toBe(9);
    // Replayed without a seed, a recording keeps its own: the recorded run again.
    expect(planFor(file, undefined).seed).toBe(5);
  });

  it('GPX tracks and CSV traces become drivers who replay their fixes at their recorded times', () => {
    const gpx = path.join(dir, 'fleet.gpx');
    writeFileSync(
      gpx,
      `<?xml version="1.0"?><gpx><trk><name>van-7</name><trkseg>
        <trkpt lat="48.85" lon="2.35"><time>2026-03-01T08:00:00Z</time></trkpt>
        <trkpt lat="48.86" lon="2.36"><time>2026-03-01T08:01:00Z</time></trkpt></trkseg></trk>
        <trk><name>bike-2</name><trkseg><trkpt lat="48.80" lon="2.30"><time>2026-03-01T08:00:30Z</time></trkpt></trkseg></trk></gpx>`,
    );
    const fromGpx = importTraces(gpx);
    expect(fromGpx.drivers.map((d) => d.name)).toEqual(['d001', 'd002']);
    expect(fromGpx.tracks).toEqual({ d002: [[0, 48.85, 2.35], [60, 48.86, 2.36]], d001: [[30, 48.8, 2.3]] });
    expect(fromGpx.scenario.day.start).toBe('2026-03-01T08:00:00.000Z');
    expect(() => parseScenario(fromGpx.scenario, 'imported')).not.toThrow();

    const csv = path.join(dir, 'fleet.csv');
    writeFileSync(csv, 'driver,time,lat,lon\na,2026-03-01T08:00:00Z,48.85,2.35\na,2026-03-01T08:00:10Z,48.851,2.351\nb,not a time,1,2\n');
    const fromCsv = importTraces(csv);
    expect(fromCsv.tracks).toEqual({ d001: [[0, 48.85, 2.35], [10, 48.851, 2.351]] });
    writeFileSync(csv, 'who,when\nx,y\n');
    expect(() => importTraces(csv)).toThrow(/driver, time, lat, lng/);
  });
});
