import { Type } from 'typebox';
import type { WorkerScheduleView } from '../../engine/fleet/worker-schedule.service.ts';
import { SCHEDULE_LIMITS } from '../../engine/fleet/schedule.ts';
import { Id, Nullable, Timestamp } from './common.schema.ts';

const StartTime = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, site time' });
// 24:00 lets a slot run to midnight, since an end is exclusive and must be after the start.
const EndTime = Type.String({ pattern: '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$', description: 'HH:MM (or 24:00), site time, exclusive' });
const Slot = Type.Object({ start_time: StartTime, end_time: EndTime }, { additionalProperties: false });
const WeeklySlot = Type.Object(
  { day_of_week: Type.Integer({ minimum: 0, maximum: 6, description: '0 Sunday to 6 Saturday' }), start_time: StartTime, end_time: EndTime },
  { additionalProperties: false },
);
const Exception = Type.Object(
  {
    date: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'YYYY-MM-DD, site date' }),
    off: Type.Optional(Type.Boolean({ description: 'true: not working that day' })),
    slots: Type.Optional(Type.Array(Slot, { maxItems: SCHEDULE_LIMITS.slotsPerDay, description: "replace the week's slots that day" })),
  },
  { additionalProperties: false },
);
const Weekly = Type.Union([Type.Array(WeeklySlot, { maxItems: SCHEDULE_LIMITS.weeklySlots }), Type.Null()], {
  description: 'null: no weekday is restricted (on at any time but on the exceptions\' days); []: on only in the exceptions\' slots',
});
const Exceptions = Type.Array(Exception, { maxItems: SCHEDULE_LIMITS.exceptions });

export const WorkerIdQuery = Type.Object({ worker_id: Id }, { additionalProperties: false });

export const ReplaceScheduleBody = Type.Object({ worker_id: Id, weekly: Weekly, exceptions: Exceptions }, { additionalProperties: false });

export const WorkerScheduleResponse = Type.Object(
  { worker_id: Id, timezone: Type.String({ description: "the site's IANA zone" }), weekly: Weekly, exceptions: Exceptions, updated_at: Nullable(Timestamp) },
  { additionalProperties: false },
);

export function toWorkerScheduleResponse(s: WorkerScheduleView) {
  return { worker_id: s.workerId, timezone: s.timezone, weekly: s.weekly, exceptions: s.exceptions, updated_at: s.updatedAt?.toISOString() ?? null };
}
