import { DomainError } from '../domain-error.ts';

/** An absolute interval, epoch milliseconds, start ≤ end. */
export type AbsoluteWindow = { start: number; end: number };

/** More windows than this on one waypoint is not a schedule anyone keeps. */
export const MAX_WINDOWS_PER_WAYPOINT = 10;

const LOCAL = /^(\d{2}):(\d{2})\s*-\s*(\d{2}):(\d{2})$/;
// A full ISO 8601 date-time with an explicit zone: an interval must not depend on the server's clock settings.
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Parses an `access_window` (the grammar is in the README, "Maps and routing"):
 *
 *     access_window := "" | window ("," window)*
 *     window        := HH:MM "-" HH:MM            local time in `timeZone`, on the local day of `day`
 *                    | instant "/" instant        ISO 8601 with Z or an offset, e.g. 2026-11-21T09:00Z/2026-11-21T11:00Z
 *
 * A local window whose end is not after its start runs past midnight ("22:00-02:00"); "24:00" ends at midnight.
 * Such a window is also taken from the evening before when that one is still open at `day` (leaving at 00:30, the
 * 22:00-02:00 window open since last evening is the one to use, not tonight's).
 * Windows come back sorted by start with overlaps merged. Whitespace around tokens is ignored.
 *
 * @param day the moment whose local date anchors `HH:MM` windows (the route's departure)
 * @param lastNight whether an overnight window of the evening before counts (false for a weekday's own hours)
 * @throws DomainError 400 INVALID_ACCESS_WINDOW naming `field` and the bad token
 */
export function parseAccessWindow(text: string, day: Date, timeZone: string, field: string, lastNight = true): AbsoluteWindow[] {
  if (text.trim() === '') return [];
  const tokens = text.split(',').map((t) => t.trim());
  if (tokens.length > MAX_WINDOWS_PER_WAYPOINT) throw invalid(field, `at most ${MAX_WINDOWS_PER_WAYPOINT} windows`);
  const date = localDate(day, timeZone);
  const windows = tokens.flatMap((token) => parseWindow(token, date, lastNight ? day.getTime() : Infinity, timeZone, field));
  return mergeOverlaps(windows);
}

/** `openAfter`: an overnight window of the evening before is kept when it ends after this instant. */
function parseWindow(token: string, date: LocalDate, openAfter: number, timeZone: string, field: string): AbsoluteWindow[] {
  const local = LOCAL.exec(token);
  if (local) {
    const [startH, startM, endH, endM] = local.slice(1).map(Number) as [number, number, number, number];
    if (!validClock(startH, startM, false) || !validClock(endH, endM, true)) throw invalid(field, `"${token}" is not a valid HH:MM-HH:MM`);
    const startMinutes = startH * 60 + startM;
    let endMinutes = endH * 60 + endM;
    if (endMinutes > startMinutes) return [{ start: zonedToEpoch(date, startMinutes, timeZone), end: zonedToEpoch(date, endMinutes, timeZone) }];
    endMinutes += 24 * 60;
    const tonight = { start: zonedToEpoch(date, startMinutes, timeZone), end: zonedToEpoch(date, endMinutes, timeZone) };
    const eve = dayBefore(date);
    const lastNight = { start: zonedToEpoch(eve, startMinutes, timeZone), end: zonedToEpoch(eve, endMinutes, timeZone) };
    return lastNight.end > openAfter ? [lastNight, tonight] : [tonight];
  }
  const parts = token.split('/');
  if (parts.length === 2 && parts.every((p) => ISO_INSTANT.test(p.trim()))) {
    const [start, end] = parts.map((p) => Date.parse(p.trim())) as [number, number];
    if (!Number.isFinite(start) || !Number.isFinite(end)) throw invalid(field, `"${token}" has an impossible date`);
    if (end < start) throw invalid(field, `"${token}" ends before it starts`);
    return [{ start, end }];
  }
  throw invalid(field, `"${token}" is neither HH:MM-HH:MM nor an ISO interval start/end with a zone`);
}

function validClock(hours: number, minutes: number, isEnd: boolean): boolean {
  if (isEnd && hours === 24 && minutes === 0) return true;
  return hours < 24 && minutes < 60;
}

function mergeOverlaps(windows: AbsoluteWindow[]): AbsoluteWindow[] {
  const sorted = [...windows].sort((a, b) => a.start - b.start);
  const merged: AbsoluteWindow[] = [];
  for (const window of sorted) {
    const last = merged.at(-1);
    if (last && window.start <= last.end) last.end = Math.max(last.end, window.end);
    else merged.push({ ...window });
  }
  return merged;
}

type LocalDate = { year: number; month: number; day: number };

function dayBefore(date: LocalDate): LocalDate {
  const eve = new Date(Date.UTC(date.year, date.month - 1, date.day - 1));
  return { year: eve.getUTCFullYear(), month: eve.getUTCMonth() + 1, day: eve.getUTCDate() };
}

function localDate(moment: Date, timeZone: string): LocalDate {
  const parts = wallClock(moment.getTime(), timeZone);
  return { year: parts.year, month: parts.month, day: parts.day };
}

/**
 * The instant when clocks in `timeZone` show `date` plus `minutes` (which may pass midnight): guess with the offset
 * at the naive instant, then correct with the offset at the guess. In a spring-forward gap this lands just after
 * the gap; a wall time that occurs twice (fall back) resolves to one of its two instants.
 */
function zonedToEpoch(date: LocalDate, minutes: number, timeZone: string): number {
  const naive = Date.UTC(date.year, date.month - 1, date.day, 0, minutes);
  const guess = naive - offsetAt(naive, timeZone);
  return naive - offsetAt(guess, timeZone);
}

/** Local minus UTC at `instant`, milliseconds. */
function offsetAt(instant: number, timeZone: string): number {
  const p = wallClock(instant, timeZone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(instant / 1000) * 1000;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function wallClock(instant: number, timeZone: string) {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, format);
  }
  const parts = format.formatToParts(instant);
  const value = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return { year: value('year'), month: value('month'), day: value('day'), hour: value('hour'), minute: value('minute'), second: value('second') };
}

function invalid(field: string, reason: string): DomainError {
  return DomainError.invalid('INVALID_ACCESS_WINDOW', `${field}: ${reason}`, field);
}
