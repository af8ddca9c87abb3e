import { UserSchema } from '../../persistence/entities/user.entity.ts';
import { WorkerSchema } from '../../persistence/entities/worker.entity.ts';
import { availableDrivers } from '../../engine/dispatch/available-drivers.ts';
import { dispatchDeps } from '../../engine/dispatch/dispatch-deps.ts';
import { getDispatch, searchDispatches } from '../../engine/dispatch/dispatch-queries.ts';
import { toDispatchData } from '../../engine/dispatch/dispatch-record.ts';
import { getDispatchSettings, updateDispatchSettings } from '../../engine/dispatch/dispatch-settings.ts';
import { assignDispatch, dispatchToTeam, toDispatchConflict } from '../../engine/dispatch/dispatch.service.ts';
import { DomainError } from '../../engine/domain-error.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import {
  AssignBody,
  AssignResult,
  AvailableDriverEntry,
  AvailableDriversBody,
  AvailableDriversQuery,
  DispatchResponse,
  DispatchSearchQuery,
  DispatchSettingsBody,
  DispatchSettingsResponse,
  TeamJobBody,
  TeamJobResult,
} from '../schemas/dispatch.schema.ts';
import { toWorkerResponse } from '../schemas/worker.schema.ts';
import { requireSite } from '../tenancy.ts';
import { Type } from 'typebox';
import { commandContext } from './command-context.ts';

const SearchQuery = Type.Object({ ...DispatchSearchQuery, ...pagingQuery({ created_at: 'created_at' }) }, { additionalProperties: false });

/** Dispatch records, settings, the available-drivers list and the single-job dispatch methods. */
export const dispatchOperations = [
  defineOperation({
    id: 'dispatch.get',
    method: 'GET',
    path: '/dispatch',
    summary: 'Get a dispatch record with its decision explanation',
    description: 'The decision lists the candidates with their scores (eta minutes, distance, load), the drivers left out with the reason, the tie rule and the winner.',
    tag: 'Dispatch',
    access: 'dispatch.read',
    host: 'site',
    query: IdQuery,
    response: DataResponse(DispatchResponse),
    handler: async ({ query, site, read }) => ({ data: toDispatchData(await getDispatch(read, requireSite(site).id, query.id)) }),
  }),
  defineOperation({
    id: 'dispatch.search',
    method: 'GET',
    path: '/dispatch/search',
    summary: "Search this site's dispatch records (newest first unless sorted otherwise)",
    tag: 'Dispatch',
    access: 'dispatch.read',
    host: 'site',
    query: SearchQuery,
    response: SearchResponse(DispatchResponse),
    handler: async ({ query, site, read }) => {
      const paging = readPaging(query, { created_at: 'created_at' }, '-created_at');
      const [rows, total] = await searchDispatches(read, requireSite(site).id, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy });
      return searchBody(rows.map(toDispatchData), total, paging);
    },
  }),
  defineOperation({
    id: 'dispatch.availableDrivers',
    method: 'GET',
    path: '/dispatch/available-drivers',
    summary: 'Drivers for a job, flagged available or not (off_schedule, has_conflict, ...) with their ETA to it',
    description: 'Fields as a JSON body (as the spec shows, a GET with a body) or as query parameters; the body wins field by field.',
    tag: 'Dispatch',
    access: 'dispatch.read',
    host: 'site',
    query: AvailableDriversQuery,
    body: AvailableDriversBody,
    response: Type.Object({ data: Type.Array(AvailableDriverEntry) }, { additionalProperties: false }),
    handler: async ({ query, body, site, services, transaction }) => {
      const input = { ...query, ...body };
      if (!input.job_id) throw DomainError.invalid('VALIDATION_FAILED', 'job_id is required (body or query)', 'job_id');
      const siteId = requireSite(site).id;
      const mapping = dispatchDeps(services).mappingFor(siteId);
      return transaction(async (em) => {
        const entries = await availableDrivers(em, siteId, { ...input, job_id: input.job_id! }, services.clock.now(), mapping);
        const ids = entries.map((e) => e.driver.userId);
        const [workers, users] = ids.length ? await Promise.all([em.find(WorkerSchema, { userId: { $in: ids } }), em.find(UserSchema, { id: { $in: ids } })]) : [[], []];
        const data = entries.flatMap((entry) => {
          const worker = workers.find((w) => w.userId === entry.driver.userId);
          const user = users.find((u) => u.id === entry.driver.userId);
          if (!worker || !user) return [];
          const driver = { ...toWorkerResponse({ user, worker }), availability: entry.driver.availability, load: entry.driver.load };
          return [{ available: entry.available, unavailable_reason: entry.unavailable_reason, eta_to_job: entry.eta_to_job, driver }];
        });
        return { data };
      });
    },
  }),
  defineOperation({
    id: 'dispatch.assign',
    method: 'POST',
    path: '/dispatch/assign',
    summary: 'Dispatch a job: to a named driver (manual) or by a strategy; now or at start_at',
    description:
      'A vehicle is required: vehicle_id or the driver\'s default (422 VEHICLE_REQUIRED). A driver at their max_load of open jobs is 409 DRIVER_AT_CAPACITY. ' +
      'The job joins the driver\'s open route of the day unless route_id is given. ' +
      'require_confirmation leaves the dispatch pending until the driver accepts; a manual assignment is not an acceptance.',
    tag: 'Dispatch',
    access: 'dispatch.manage',
    host: 'site',
    body: AssignBody,
    response: DataResponse(AssignResult),
    handler: async (ctx) => {
      const deps = dispatchDeps(ctx.services);
      try {
        return { data: await assignDispatch(deps, commandContext(ctx), ctx.body) };
      } catch (error) {
        throw toDispatchConflict(error, ctx.body.job_id);
      }
    },
  }),
  defineOperation({
    id: 'dispatch.teamJob',
    method: 'POST',
    path: '/dispatch/team/job',
    summary: 'Dispatch a job to a driver of a team picked by selection_strategy (eta, load, round-robin)',
    tag: 'Dispatch',
    access: 'dispatch.manage',
    host: 'site',
    body: TeamJobBody,
    response: DataResponse(TeamJobResult),
    handler: async (ctx) => {
      try {
        return { data: await dispatchToTeam(dispatchDeps(ctx.services), commandContext(ctx), ctx.body) };
      } catch (error) {
        throw toDispatchConflict(error, ctx.body.job_id);
      }
    },
  }),
  defineOperation({
    id: 'dispatch.settings.get',
    method: 'GET',
    path: '/dispatch/settings',
    summary: "The site's dispatch strategy and auto dispatch switch",
    tag: 'Dispatch',
    access: 'dispatch.read',
    host: 'site',
    response: DataResponse(DispatchSettingsResponse),
    handler: async ({ site, transaction }) => ({ data: await transaction((em) => getDispatchSettings(em, requireSite(site).id)) }),
  }),
  defineOperation({
    id: 'dispatch.settings.update',
    method: 'PUT',
    path: '/dispatch/settings',
    summary: "Change the site's dispatch strategy or switch auto dispatch on or off",
    tag: 'Dispatch',
    access: 'dispatch.manage',
    host: 'site',
    body: DispatchSettingsBody,
    response: DataResponse(DispatchSettingsResponse),
    handler: async ({ body, site, actor, transaction }) => ({ data: await transaction((em) => updateDispatchSettings(em, actor, requireSite(site).id, body)) }),
  }),
];
