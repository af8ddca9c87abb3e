import type { ScheduleException, TimeSlot, WeeklySlot } from '../../persistence/entities/worker-schedule.entity.ts';
import { DomainError } from '../domain-error.ts';

/**
 * A worker's hours. `weekly: null` restricts no weekday (on at any time, but on the days an exception names);
 * `weekly: []` is a week without a slot (on only in exceptions' slots). A worker without a schedule at all is not
 * restricted either: callers hold that as a null schedule.
 */
export type WorkerScheduleData = { weekly: WeeklySlot[] | null; exceptions: ScheduleException[] };

/** Bounds that keep a schedule a human-edited week, not a generated calendar. */
export const SCHEDULE_LIMITS = { slotsPerDay: 12, weeklySlots: 7 * 12, exceptions: 366 } as const;

/**
 * Whether a worker is scheduled to work at `instant`, read on the site's wall clock: the instant is converted to
 * the local date and time of `timezone` (an IANA zone) by `Intl`, so DST changes need no offset arithmetic here.
 * An exception for the local date replaces the weekly slots of that day (`off` means no slot at all); without one,
 * a schedule with no weekly restriction (`weekly: null`) is on.
 */
export function isOnSchedule(schedule: WorkerScheduleData, timezone: string, instant: Date): boolean {
  const local = localParts(timezone, instant);
  const slots = slotsOn(schedule, local.date, local.dayOfWeek);
  return slots === null || slots.some((s) => s.start_time <= local.time && local.time < s.end_time);
}

/**
 * The slots of a local date: its exception's (none when `off`), else the week's for that weekday; null when the
 * day is not restricted (no exception and no weekly restriction).
 */
export function slotsOn(schedule: WorkerScheduleData, date: string, dayOfWeek: number): TimeSlot[] | null {
  const exception = schedule.exceptions.find((e) => e.date === date);
  if (exception) return exception.off ? [] : (exception.slots ?? []);
  return schedule.weekly === null ? null : schedule.weekly.filter((s) => s.day_of_week === dayOfWeek);
}

/**
 * Checks a schedule before it replaces the stored one.
 * @throws DomainError 400 INVALID_SCHEDULE naming the offending field as the schema's errors do (`weekly.2.end_time`, `exceptions.0.slots`, ...)
 */
export function assertValidSchedule(schedule: WorkerScheduleData): void {
  const weekly = schedule.weekly ?? [];
  if (weekly.length > SCHEDULE_LIMITS.weeklySlots) invalid('weekly', `at most ${SCHEDULE_LIMITS.weeklySlots} weekly slots`);
  if (schedule.exceptions.length > SCHEDULE_LIMITS.exceptions) invalid('exceptions', `at most ${SCHEDULE_LIMITS.exceptions} exceptions`);
  for (let day = 0; day <= 6; day++) {
    const indexed = weekly.map((slot, index) => ({ slot, index })).filter((e) => e.slot.day_of_week === day);
    assertSlots(indexed.map((e) => e.slot), (i, field) => `weekly.${indexed[i]?.index ?? 0}${field}`);
  }
  const dates = new Set<string>();
  schedule.exceptions.forEach((exception, index) => {
    const at = `exceptions.${index}`;
    if (!isCalendarDate(exception.date)) invalid(`${at}.date`, `${exception.date} is not a calendar date`);
    if (dates.has(exception.date)) invalid(`${at}.date`, `${exception.date} has two exceptions`);
    dates.add(exception.date);
    const slots = exception.slots ?? [];
    if (exception.off && slots.length > 0) invalid(`${at}.slots`, 'a day off has no slots');
    if (!exception.off && slots.length === 0) invalid(`${at}.slots`, 'give off: true or at least one slot');
    assertSlots(slots, (i, field) => `${at}.slots.${i}${field}`);
  });
}

function assertSlots(slots: TimeSlot[], fieldOf: (index: number, field: string) => string): void {
  if (slots.length > SCHEDULE_LIMITS.slotsPerDay) invalid(fieldOf(SCHEDULE_LIMITS.slotsPerDay, ''), `at most ${SCHEDULE_LIMITS.slotsPerDay} slots a day`);
  slots.forEach((slot, index) => {
    if (slot.end_time <= slot.start_time) invalid(fieldOf(index, '.end_time'), `${slot.end_time} is not after ${slot.start_time}`);
  });
  const order = slots.map((slot, index) => ({ slot, index })).sort((a, b) => a.slot.start_time.localeCompare(b.slot.start_time));
  for (let i = 1; i < order.length; i++) {
    const previous = order[i - 1];
    const current = order[i];
    if (previous && current && current.slot.start_time < previous.slot.end_time) {
      invalid(fieldOf(current.index, '.start_time'), `${current.slot.start_time}-${current.slot.end_time} overlaps ${previous.slot.start_time}-${previous.slot.end_time}`);
    }
  }
}

// The formatter is costly to build and dispatch asks per driver and per job: one per zone is enough.
const formatters = new Map<string, Intl.DateTimeFormat>();

function localParts(timezone: string, instant: Date): { date: string; time: string; dayOfWeek: number } {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23',
    });
    formatters.set(timezone, formatter);
  }
  const parts = Object.fromEntries(formatter.formatToParts(instant).map((p) => [p.type, p.value]));
  const date = `${parts.year}-${parts.month}-${parts.day}`;
  // The weekday of a calendar date does not depend on any zone, so reading it in UTC is exact.
  const dayOfWeek = new Date(`${date}T00:00:00Z`).getUTCDay();
  return { date, time: `${parts.hour}:${parts.minute}`, dayOfWeek };
}

function isCalendarDate(date: string): boolean {
  const parsed = new Date(`${date}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(date);
}

function invalid(field: string, message: string): never {
  throw DomainError.invalid('INVALID_SCHEDULE', `${field}: ${message}`, field);
}
