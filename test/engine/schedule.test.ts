import { describe, expect, it } from 'vitest';
import { shiftOn } from '../../engine/dispatch/bulk-optimize-problem.ts';
import { assertValidSchedule, isOnSchedule, type WorkerScheduleData } from '../../engine/fleet/schedule.ts';

const PARIS = 'Europe/Paris';
const SUNDAY = 0;
const SATURDAY = 6;
const MONDAY = 1;

/** A thunk validating a schedule made of these exceptions only. */
function check(exceptions: WorkerScheduleData['exceptions']) {
  return () => assertValidSchedule({ weekly: [], exceptions });
}

function week(...weekly: NonNullable<WorkerScheduleData['weekly']>): WorkerScheduleData {
  return { weekly, exceptions: [] };
}

describe('isOnSchedule', () => {
  it("reads a slot on the site's wall clock across the spring DST change (Paris, 29 March 2026)", () => {
    // Clocks jump from 02:00 to 03:00 local: 00:30Z is 01:30 CET, 01:15Z is 03:15 CEST.
    const night = week({ day_of_week: SUNDAY, start_time: '01:00', end_time: '03:30' });
    expect(isOnSchedule(night, PARIS, new Date('2026-03-29T00:30:00Z'))).toBe(true);
    expect(isOnSchedule(night, PARIS, new Date('2026-03-29T01:15:00Z'))).toBe(true);
    expect(isOnSchedule(night, PARIS, new Date('2026-03-29T01:45:00Z'))).toBe(false);
    // The same 08:00-12:00 slot starts at 07:00Z on the Saturday before and at 06:00Z on the Monday after.
    const mornings = week({ day_of_week: SATURDAY, start_time: '08:00', end_time: '12:00' }, { day_of_week: MONDAY, start_time: '08:00', end_time: '12:00' });
    expect(isOnSchedule(mornings, PARIS, new Date('2026-03-28T06:30:00Z'))).toBe(false);
    expect(isOnSchedule(mornings, PARIS, new Date('2026-03-28T07:00:00Z'))).toBe(true);
    expect(isOnSchedule(mornings, PARIS, new Date('2026-03-30T06:00:00Z'))).toBe(true);
    expect(isOnSchedule(mornings, PARIS, new Date('2026-03-30T05:59:00Z'))).toBe(false);
    expect(isOnSchedule(mornings, PARIS, new Date('2026-03-30T10:00:00Z'))).toBe(false);
  });

  it('counts a slot crossing noon from its start (inclusive) to its end (exclusive)', () => {
    const lunch = week({ day_of_week: 3, start_time: '11:30', end_time: '13:15' });
    // Wednesday 7 January 2026, Paris is UTC+1.
    expect(isOnSchedule(lunch, PARIS, new Date('2026-01-07T10:29:59Z'))).toBe(false);
    expect(isOnSchedule(lunch, PARIS, new Date('2026-01-07T10:30:00Z'))).toBe(true);
    expect(isOnSchedule(lunch, PARIS, new Date('2026-01-07T11:00:00Z'))).toBe(true);
    expect(isOnSchedule(lunch, PARIS, new Date('2026-01-07T12:14:00Z'))).toBe(true);
    expect(isOnSchedule(lunch, PARIS, new Date('2026-01-07T12:15:00Z'))).toBe(false);
    expect(isOnSchedule(lunch, PARIS, new Date('2026-01-08T11:00:00Z'))).toBe(false);
  });

  it('lets an exception take a day off or replace its slots, on the local date', () => {
    const schedule: WorkerScheduleData = {
      weekly: [{ day_of_week: 3, start_time: '09:00', end_time: '17:00' }],
      exceptions: [{ date: '2026-01-07', off: true }, { date: '2026-01-14', slots: [{ start_time: '14:00', end_time: '16:00' }] }],
    };
    expect(isOnSchedule(schedule, PARIS, new Date('2026-01-07T10:00:00Z'))).toBe(false);
    expect(isOnSchedule(schedule, PARIS, new Date('2026-01-14T10:00:00Z'))).toBe(false);
    expect(isOnSchedule(schedule, PARIS, new Date('2026-01-14T14:00:00Z'))).toBe(true);
    expect(isOnSchedule(schedule, PARIS, new Date('2026-01-21T10:00:00Z'))).toBe(true);
    // 23:30Z on 6 January is already the 7th in Paris: the exception follows the local date, not the UTC one.
    const allDay: WorkerScheduleData = { weekly: [{ day_of_week: 2, start_time: '00:00', end_time: '24:00' }, { day_of_week: 3, start_time: '00:00', end_time: '24:00' }], exceptions: [{ date: '2026-01-07', off: true }] };
    expect(isOnSchedule(allDay, PARIS, new Date('2026-01-06T22:30:00Z'))).toBe(true);
    expect(isOnSchedule(allDay, PARIS, new Date('2026-01-06T23:30:00Z'))).toBe(false);
    expect(isOnSchedule(allDay, 'UTC', new Date('2026-01-06T23:30:00Z'))).toBe(true);
  });

  it('is never on schedule with an empty week', () => {
    expect(isOnSchedule(week(), PARIS, new Date())).toBe(false);
  });

  it('without a week (weekly: null) is on at any time but on the days an exception names, which it restricts', () => {
    const exceptionsOnly: WorkerScheduleData = {
      weekly: null,
      exceptions: [{ date: '2026-01-07', off: true }, { date: '2026-01-08', slots: [{ start_time: '09:00', end_time: '12:00' }] }],
    };
    expect(isOnSchedule(exceptionsOnly, PARIS, new Date('2026-01-06T03:00:00Z'))).toBe(true);
    expect(isOnSchedule(exceptionsOnly, PARIS, new Date('2026-01-07T10:00:00Z'))).toBe(false);
    expect(isOnSchedule(exceptionsOnly, PARIS, new Date('2026-01-08T09:00:00Z'))).toBe(true);
    expect(isOnSchedule(exceptionsOnly, PARIS, new Date('2026-01-08T12:00:00Z'))).toBe(false);
    expect(shiftOn(exceptionsOnly, PARIS, new Date('2026-01-06T10:00:00Z'))).toBeNull();
    expect(shiftOn(exceptionsOnly, PARIS, new Date('2026-01-07T10:00:00Z'))).toEqual({ start: 0, end: 0 });
    expect(shiftOn(exceptionsOnly, PARIS, new Date('2026-01-08T10:00:00Z'))).toEqual({ start: Date.parse('2026-01-08T08:00:00Z'), end: Date.parse('2026-01-08T11:00:00Z') });
  });
});

describe('assertValidSchedule', () => {
  it('refuses a slot that does not end after it starts, naming the field', () => {
    expect(() => assertValidSchedule(week({ day_of_week: 1, start_time: '10:00', end_time: '10:00' }))).toThrow(
      expect.objectContaining({ status: 400, code: 'INVALID_SCHEDULE', field: 'weekly.0.end_time' }),
    );
  });

  it('refuses overlapping slots on one day but accepts touching ones and other days', () => {
    const overlapping = week({ day_of_week: 1, start_time: '08:00', end_time: '12:00' }, { day_of_week: 2, start_time: '09:00', end_time: '10:00' }, { day_of_week: 1, start_time: '11:00', end_time: '14:00' });
    expect(() => assertValidSchedule(overlapping)).toThrow(expect.objectContaining({ field: 'weekly.2.start_time' }));
    expect(() => assertValidSchedule(week({ day_of_week: 1, start_time: '08:00', end_time: '12:00' }, { day_of_week: 1, start_time: '12:00', end_time: '14:00' }))).not.toThrow();
  });

  it('checks exceptions: real dates, one per date, off or slots', () => {
    expect(check([{ date: '2026-02-30', off: true }])).toThrow(expect.objectContaining({ field: 'exceptions.0.date' }));
    expect(check([{ date: '2026-02-03', off: true }, { date: '2026-02-03', off: true }])).toThrow(expect.objectContaining({ field: 'exceptions.1.date' }));
    expect(check([{ date: '2026-02-03', off: true, slots: [{ start_time: '09:00', end_time: '10:00' }] }])).toThrow(expect.objectContaining({ field: 'exceptions.0.slots' }));
    expect(check([{ date: '2026-02-03' }])).toThrow(expect.objectContaining({ field: 'exceptions.0.slots' }));
    expect(check([{ date: '2026-02-03', slots: [{ start_time: '09:00', end_time: '10:00' }, { start_time: '09:30', end_time: '11:00' }] }])).toThrow(
      expect.objectContaining({ field: 'exceptions.0.slots.1.start_time' }),
    );
  });

  it('caps the number of slots a day', () => {
    const slots = Array.from({ length: 13 }, (_, i) => ({ day_of_week: 4, start_time: `${String(i).padStart(2, '0')}:00`, end_time: `${String(i).padStart(2, '0')}:30` }));
    expect(() => assertValidSchedule(week(...slots))).toThrow(expect.objectContaining({ code: 'INVALID_SCHEDULE' }));
  });
});
