import { Type } from 'typebox';
import { readVisibleJobDetail } from '../../engine/jobs/job-detail-row.ts';
import { searchJobs } from '../../engine/jobs/job-search.ts';
import { updateJob } from '../../engine/jobs/job-update.ts';
import { checkJobInput, createJob } from '../../engine/jobs/job.service.ts';
import { defineOperation } from '../operation.ts';
import { ListResponse, listBody, pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, Id, Timestamp } from '../schemas/common.schema.ts';
import { CustomFieldFilterQuery } from '../schemas/customfield.schema.ts';
import { JobCreateBody, JobPatchBody, JobPutBody, JobResponse } from '../schemas/job.schema.ts';
import { commandContext, siteReads } from './command-context.ts';
import { locateRequestAddresses } from '../site-mapping.ts';

const SORTABLE = { created_at: 'createdAt', updated_at: 'updatedAt', completed_at: 'completedAt', id: 'id' };

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'a job id, or text in the notes or payment method' })),
    workflow_state_ids: Type.Optional(Type.Array(Id, { maxItems: 50 })),
    phase: Type.Optional(Type.Array(Type.String({ pattern: '^(unassigned|assigned|in_progress|completed|cancelled)$' }), { maxItems: 5 })),
    customer_user_id: Type.Optional(Id),
    driver_user_id: Type.Optional(Id),
    service_type_id: Type.Optional(Id),
    created_from: Type.Optional(Timestamp),
    created_to: Type.Optional(Timestamp),
    completed_from: Type.Optional(Timestamp),
    completed_to: Type.Optional(Timestamp),
    custom_fields: Type.Optional(CustomFieldFilterQuery),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(pagingQuery(SORTABLE), { additionalProperties: false });
const JobIdParams = Type.Object({ id: Id }, { additionalProperties: false });

export const jobOperations = [
  defineOperation({
    id: 'job.create',
    method: 'POST',
    path: '/job',
    summary: 'Create a job with ordered stops (customer by id or inline details)',
    tag: 'Jobs',
    access: 'job.create',
    host: 'site',
    body: JobCreateBody,
    status: 201,
    response: DataResponse(JobResponse),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      const stops = ctx.body.stops.map((stop, index) => ({ address: stop, field: `stops.${index}.point` }));
      await locateRequestAddresses(ctx, stops, (em) => checkJobInput(em, command.siteId, command.actor, ctx.body, true));
      return { data: await ctx.services.engine.command(command, `job:new:${ctx.requestId}`, (scope) => createJob(scope, ctx.body)) };
    },
  }),
  defineOperation({
    id: 'job.list',
    method: 'GET',
    path: '/job',
    summary: 'List jobs (page + per_page), newest first unless sorted',
    tag: 'Jobs',
    access: 'job.read',
    host: 'site',
    query: ListQuery,
    response: ListResponse(JobResponse),
    handler: async (ctx) => {
      const paging = readPaging(ctx.query, SORTABLE, '-created_at');
      const [jobs, total] = await searchJobs(...siteReads(ctx), {}, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy });
      return listBody(jobs, total, paging);
    },
  }),
  defineOperation({
    id: 'job.search',
    method: 'GET',
    path: '/job/search',
    summary: 'Search jobs by workflow state, phase, customer, driver, service type, time ranges and text',
    tag: 'Jobs',
    access: 'job.read',
    host: 'site',
    query: SearchQuery,
    response: SearchResponse(JobResponse),
    handler: async (ctx) => {
      const paging = readPaging(ctx.query, SORTABLE, '-created_at');
      const filter = { ...ctx.query, phases: ctx.query.phase };
      const [jobs, total] = await searchJobs(...siteReads(ctx), filter, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy });
      return searchBody(jobs, total, paging);
    },
  }),
  defineOperation({
    id: 'job.get',
    method: 'GET',
    path: '/job/{id}',
    summary: 'Get a job with its stops and their addresses',
    tag: 'Jobs',
    access: 'job.read',
    host: 'site',
    params: JobIdParams,
    response: DataResponse(JobResponse),
    handler: async (ctx) => {
      return { data: await readVisibleJobDetail(...siteReads(ctx), ctx.params.id) };
    },
  }),
  defineOperation({
    id: 'job.update',
    method: 'PUT',
    path: '/job',
    summary: "Update a job's details and its stops' details: supplied fields change, null clears",
    tag: 'Jobs',
    access: 'job.update',
    host: 'site',
    body: JobPutBody,
    response: DataResponse(JobResponse),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      const { id, ...patch } = ctx.body;
      return { data: await ctx.services.engine.command(command, `job:${id}`, (scope) => updateJob(scope, id, patch)) };
    },
  }),
  defineOperation({
    id: 'job.patch',
    method: 'PATCH',
    path: '/job/{id}',
    summary: 'Patch a job: a value sets, an omitted field stays, null clears',
    tag: 'Jobs',
    access: 'job.update',
    host: 'site',
    params: JobIdParams,
    body: JobPatchBody,
    response: DataResponse(JobResponse),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      return { data: await ctx.services.engine.command(command, `job:${ctx.params.id}`, (scope) => updateJob(scope, ctx.params.id, ctx.body)) };
    },
  }),
];
