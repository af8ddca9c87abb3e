import { deleteWorkerSchedule, getWorkerSchedule, replaceWorkerSchedule } from '../../engine/fleet/worker-schedule.service.ts';
import { defineOperation } from '../operation.ts';
import { DataResponse, Deleted } from '../schemas/common.schema.ts';
import { ReplaceScheduleBody, toWorkerScheduleResponse, WorkerIdQuery, WorkerScheduleResponse } from '../schemas/worker-schedule.schema.ts';
import { requireSite } from '../tenancy.ts';

export const workerScheduleOperations = [
  defineOperation({
    id: 'worker.schedule.get',
    method: 'GET',
    path: '/worker/schedule',
    summary: "Get a worker's weekly slots and exceptions (times in the site's timezone)",
    description: 'A worker without a schedule answers weekly: null and no exceptions: their hours are not restricted.',
    tag: 'Fleet',
    access: 'worker.read',
    host: 'site',
    query: WorkerIdQuery,
    response: DataResponse(WorkerScheduleResponse),
    handler: async ({ query, site, transaction }) => ({
      data: toWorkerScheduleResponse(await transaction((em) => getWorkerSchedule(em, requireSite(site), query.worker_id))),
    }),
  }),
  defineOperation({
    id: 'worker.schedule.replace',
    method: 'PUT',
    path: '/worker/schedule',
    summary: "Replace a worker's weekly slots and exceptions",
    description:
      "Slots end after they start and do not overlap on a day; an exception is a day off (off: true) or replacement slots. weekly: null restricts only the exceptions' days; weekly: [] allows only the exceptions' slots.",
    tag: 'Fleet',
    access: 'worker.manage',
    host: 'site',
    body: ReplaceScheduleBody,
    response: DataResponse(WorkerScheduleResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toWorkerScheduleResponse(await transaction((em) => replaceWorkerSchedule(em, actor, requireSite(site), body.worker_id, body))),
    }),
  }),
  defineOperation({
    id: 'worker.schedule.delete',
    method: 'DELETE',
    path: '/worker/schedule',
    summary: "Remove a worker's schedule: their hours are no longer restricted",
    tag: 'Fleet',
    access: 'worker.manage',
    host: 'site',
    query: WorkerIdQuery,
    response: Deleted,
    handler: async ({ query, site, actor, transaction }) => {
      await transaction((em) => deleteWorkerSchedule(em, actor, requireSite(site), query.worker_id));
      return { data: { id: query.worker_id, deleted: true as const } };
    },
  }),
];
