import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/** A working interval of one day, local wall-clock time "HH:MM"; the end is exclusive and after the start. */
export type TimeSlot = { start_time: string; end_time: string };
/** A weekly recurring slot: day_of_week 0 (Sunday) to 6 (Saturday), as `Date.prototype.getDay` counts. */
export type WeeklySlot = TimeSlot & { day_of_week: number };
/** One date ("YYYY-MM-DD") overriding the week: the worker is off that day, or works the replacement slots instead. */
export type ScheduleException = { date: string; off?: boolean; slots?: TimeSlot[] };

/**
 * A worker's weekly slots and dated exceptions, in the site's timezone; read and replaced as a whole. `weekly` null:
 * no weekly restriction, only the exceptions' days are restricted (migration 0043).
 */
export const WorkerScheduleSchema = defineEntity({
  name: 'WorkerSchedule',
  tableName: 'worker_schedule',
  filters: siteFilter,
  properties: {
    siteId: p.string().primary(),
    userId: p.string().primary(),
    weekly: p.json<WeeklySlot[]>().nullable(),
    exceptions: p.json<ScheduleException[]>(),
    ...timestamps(),
  },
});

export type WorkerSchedule = InferEntity<typeof WorkerScheduleSchema>;
