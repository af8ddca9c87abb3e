import { Type } from 'typebox';
import { addTip, earningsSummary, earningsTimeSeries, PERIODS, searchEarnings, type EarningsViewer } from '../../engine/earnings/earnings-queries.ts';
import { createEarningsRule, getEarningsRule, searchEarningsRules, updateEarningsRule } from '../../engine/earnings/earnings-rule.service.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, Id, IdQuery, Timestamp } from '../schemas/common.schema.ts';
import {
  CreateEarningsRuleBody,
  DriverEarningResponse,
  EarningsPeriodEntry,
  EarningsRuleResponse,
  EarningsSummaryEntry,
  TipBody,
  toDriverEarningResponse,
  toEarningsRuleResponse,
  UpdateEarningsRuleBody,
} from '../schemas/earnings.schema.ts';
import { requireSite } from '../tenancy.ts';
import { commandContext } from './command-context.ts';

const RULE_SORTABLE = { name: 'name', created_at: 'createdAt', id: 'id' };
const EARNING_SORTABLE = { earned_at: 'earnedAt', total_amount_cents: 'totalAmountCents', created_at: 'createdAt', id: 'id' };

/** Filters shared by the earnings reads; a driver's own id is forced for drivers. */
const EarningsFilterFields = {
  driver_user_id: Type.Optional(Id),
  job_id: Type.Optional(Id),
  earned_at_start: Type.Optional(Timestamp),
  earned_at_end: Type.Optional(Timestamp),
};

const viewerOf = (ctx: Parameters<typeof commandContext>[0]): EarningsViewer => {
  const { actor } = commandContext(ctx);
  return { role: actor.role, userId: actor.userId };
};

export const earningsOperations = [
  defineOperation({
    id: 'earnings.rule.create',
    method: 'POST',
    path: '/earnings/rule',
    summary: "Create a pay rule (the site's first active rule becomes the default, whatever is_default says)",
    tag: 'Earnings',
    access: 'earnings.manage',
    host: 'site',
    body: CreateEarningsRuleBody,
    status: 201,
    response: DataResponse(EarningsRuleResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toEarningsRuleResponse(await transaction((em) => createEarningsRule(em, actor, requireSite(site).id, body))),
    }),
  }),
  defineOperation({
    id: 'earnings.rule.get',
    method: 'GET',
    path: '/earnings/rule',
    summary: 'Get a pay rule',
    tag: 'Earnings',
    access: 'earnings.manage',
    host: 'site',
    query: IdQuery,
    response: DataResponse(EarningsRuleResponse),
    handler: async ({ query, transaction }) => ({ data: toEarningsRuleResponse(await transaction((em) => getEarningsRule(em, query.id))) }),
  }),
  defineOperation({
    id: 'earnings.rule.update',
    method: 'PUT',
    path: '/earnings/rule',
    summary: 'Update a pay rule: supplied fields change, null clears a bound; is_default moves the default here',
    tag: 'Earnings',
    access: 'earnings.manage',
    host: 'site',
    body: UpdateEarningsRuleBody,
    response: DataResponse(EarningsRuleResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toEarningsRuleResponse(await transaction((em) => updateEarningsRule(em, actor, requireSite(site).id, body))),
    }),
  }),
  defineOperation({
    id: 'earnings.rule.search',
    method: 'GET',
    path: '/earnings/rule/search',
    summary: "Search the site's pay rules",
    tag: 'Earnings',
    access: 'earnings.manage',
    host: 'site',
    query: Type.Object(
      { q: Type.Optional(Type.String({ maxLength: 200 })), is_active: Type.Optional(Type.Boolean()), is_default: Type.Optional(Type.Boolean()), ...pagingQuery(RULE_SORTABLE) },
      { additionalProperties: false },
    ),
    response: SearchResponse(EarningsRuleResponse),
    handler: async ({ query, transaction }) => {
      const paging = readPaging(query, RULE_SORTABLE, 'name');
      const [rows, total] = await transaction((em) => searchEarningsRules(em, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }));
      return searchBody(rows.map(toEarningsRuleResponse), total, paging);
    },
  }),
  defineOperation({
    id: 'earnings.search',
    method: 'GET',
    path: '/earnings/search',
    summary: 'Search driver earnings (drivers see their own)',
    tag: 'Earnings',
    access: 'earnings.read',
    host: 'site',
    query: Type.Object({ ...EarningsFilterFields, ...pagingQuery(EARNING_SORTABLE) }, { additionalProperties: false }),
    response: SearchResponse(DriverEarningResponse),
    handler: async (ctx) => {
      const paging = readPaging(ctx.query, EARNING_SORTABLE, '-earned_at');
      const [rows, total] = await ctx.transaction((em) =>
        searchEarnings(em, viewerOf(ctx), ctx.query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }),
      );
      return searchBody(rows.map(toDriverEarningResponse), total, paging);
    },
  }),
  defineOperation({
    id: 'earnings.summary',
    method: 'GET',
    path: '/earnings/summary',
    summary: 'Totals per driver over a time range (drivers see their own)',
    tag: 'Earnings',
    access: 'earnings.read',
    host: 'site',
    query: Type.Object(EarningsFilterFields, { additionalProperties: false }),
    response: DataResponse(Type.Array(EarningsSummaryEntry)),
    handler: async (ctx) => ({ data: await ctx.transaction((em) => earningsSummary(em, viewerOf(ctx), requireSite(ctx.site).id, ctx.query)) }),
  }),
  defineOperation({
    id: 'earnings.timeseries',
    method: 'GET',
    path: '/earnings/timeseries',
    summary: "Totals per day, ISO week or month in the site's time zone (drivers see their own)",
    tag: 'Earnings',
    access: 'earnings.read',
    host: 'site',
    query: Type.Object({ period: Type.Union(PERIODS.map((p) => Type.Literal(p))), ...EarningsFilterFields }, { additionalProperties: false }),
    response: DataResponse(Type.Array(EarningsPeriodEntry)),
    handler: async (ctx) => {
      const { period, ...filter } = ctx.query;
      return { data: await ctx.transaction((em) => earningsTimeSeries(em, viewerOf(ctx), requireSite(ctx.site).id, period, filter)) };
    },
  }),
  defineOperation({
    id: 'earnings.tip',
    method: 'POST',
    path: '/earnings/tip',
    summary: "Add a tip to a completed job's earning",
    tag: 'Earnings',
    access: 'earnings.manage',
    host: 'site',
    body: TipBody,
    response: DataResponse(DriverEarningResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toDriverEarningResponse(await transaction((em) => addTip(em, actor, requireSite(site).id, body.job_id, body.amount_cents))),
    }),
  }),
];
