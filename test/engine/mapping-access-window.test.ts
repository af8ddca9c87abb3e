import { describe, expect, it } from 'vitest';
import { parseAccessWindow } from '../../engine/mapping/access-window.ts';
import { DomainError } from '../../engine/domain-error.ts';

const iso = (windows: { start: number; end: number }[]) => windows.map((w) => `${new Date(w.start).toISOString()}/${new Date(w.end).toISOString()}`);
const parse = (text: string, day = '2026-11-21T06:00:00Z', zone = 'Europe/Paris') => iso(parseAccessWindow(text, new Date(day), zone, 'waypoints.0.access_window'));

describe('access_window grammar', () => {
  it('reads HH:MM-HH:MM in the site time zone on the local day of departure', () => {
    expect(parse('09:00-11:00, 14:00-16:00')).toEqual(['2026-11-21T08:00:00.000Z/2026-11-21T10:00:00.000Z', '2026-11-21T13:00:00.000Z/2026-11-21T15:00:00.000Z']);
    // 23:30 UTC on the 20th is already the 21st in Paris.
    expect(parse('09:00-10:00', '2026-11-20T23:30:00Z')).toEqual(['2026-11-21T08:00:00.000Z/2026-11-21T09:00:00.000Z']);
    expect(parse('09:00-10:00', '2026-11-21T12:00:00Z', 'America/New_York')).toEqual(['2026-11-21T14:00:00.000Z/2026-11-21T15:00:00.000Z']);
  });

  it('follows daylight saving time: summer windows are an hour earlier in UTC', () => {
    expect(parse('09:00-10:00', '2026-07-01T06:00:00Z')).toEqual(['2026-07-01T07:00:00.000Z/2026-07-01T08:00:00.000Z']);
  });

  it('runs a window past midnight when it ends before it starts, and accepts 24:00', () => {
    expect(parse('22:00-02:00')).toEqual(['2026-11-21T21:00:00.000Z/2026-11-22T01:00:00.000Z']);
    expect(parse('20:00-24:00')).toEqual(['2026-11-21T19:00:00.000Z/2026-11-21T23:00:00.000Z']);
  });

  it('takes an overnight window from the evening before while that one is still open at departure', () => {
    // Leaving at 00:30 in Paris: last night's 22:00-02:00 is open now, tonight's comes later.
    expect(parse('22:00-02:00', '2026-11-20T23:30:00Z')).toEqual(['2026-11-20T21:00:00.000Z/2026-11-21T01:00:00.000Z', '2026-11-21T21:00:00.000Z/2026-11-22T01:00:00.000Z']);
    // Leaving at 03:00, last night's has closed.
    expect(parse('22:00-02:00', '2026-11-21T02:00:00Z')).toEqual(['2026-11-21T21:00:00.000Z/2026-11-22T01:00:00.000Z']);
  });

  it('reads ISO intervals with a zone, sorts windows and merges overlaps', () => {
    expect(parse('2026-11-21T15:00Z/2026-11-21T16:00Z,2026-11-21T09:00:00+01:00/2026-11-21T11:00:00+01:00, 10:30-12:00')).toEqual([
      '2026-11-21T08:00:00.000Z/2026-11-21T11:00:00.000Z',
      '2026-11-21T15:00:00.000Z/2026-11-21T16:00:00.000Z',
    ]);
  });

  it('treats an empty string as no constraint', () => {
    expect(parse('')).toEqual([]);
    expect(parse('   ')).toEqual([]);
  });

  it.each(['9-11', '09:00-25:00', '09:60-10:00', '09:00', '2026-11-21T09:00/2026-11-21T10:00', '2026-11-21T11:00Z/2026-11-21T10:00Z', 'morning', '09:00-10:00,'])(
    'refuses %j with 400 INVALID_ACCESS_WINDOW naming the field',
    (text) => {
      let error: unknown;
      try {
        parse(text);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ status: 400, code: 'INVALID_ACCESS_WINDOW', field: 'waypoints.0.access_window' });
    },
  );

  it('refuses more than ten windows', () => {
    expect(() => parse(Array.from({ length: 11 }, (_, i) => `${String(i + 10)}:00-${String(i + 10)}:30`).join(','))).toThrow(/at most 10 windows/);
  });
});
