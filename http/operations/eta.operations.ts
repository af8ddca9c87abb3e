import { Type } from 'typebox';
import { mappingPolicyOf } from '../../engine/eta/eta-check.ts';
import { jobEta } from '../../engine/eta/job-eta.ts';
import { listEtaConfigs, upsertEtaConfig } from '../../engine/eta/notification-config.service.ts';
import { mappingProviderForSite } from '../../engine/mapping/site-provider.ts';
import { defineOperation } from '../operation.ts';
import { listBody, ListResponse, pagingQuery, readPaging } from '../pagination.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import { EtaConfigResponse, EtaConfigUpsertBody, StopEtaResult, toEtaConfigResponse } from '../schemas/eta.schema.ts';
import { requireSite } from '../tenancy.ts';
import { commandContext } from './command-context.ts';

const SORTABLE = { created_at: 'createdAt', id: 'id' };

export const etaOperations = [
  defineOperation({
    id: 'eta.job',
    method: 'GET',
    path: '/eta/job',
    summary: "ETAs of a job's remaining stops (and, unassigned, the best driver to take it)",
    description:
      "Computed now through the site's mapping provider. Assigned or in progress: from the assigned driver's last known position along their itinerary " +
      "(their route's earlier stops first). Unassigned: from the fastest eligible driver with a position (dispatch's eligibility rule). " +
      'Service time per stop: the service type default duration shared by the job stops, else 300 s. Staff read any job, a customer their own, a driver the jobs assigned to them.',
    tag: 'ETA',
    access: 'eta.read',
    host: 'site',
    query: IdQuery,
    response: DataResponse(StopEtaResult),
    handler: async (ctx) => {
      const { siteId, actor } = commandContext(ctx);
      const now = ctx.services.clock.now();
      const data = await ctx.transaction(async (em) => jobEta(em, siteId, actor, ctx.query.id, await mappingProviderForSite(em, ctx.services.crypto, siteId, mappingPolicyOf(ctx.services.config)), now));
      return { data };
    },
  }),
  defineOperation({
    id: 'eta.notification_config.list',
    method: 'GET',
    path: '/eta/notification-config',
    summary: "The site's ETA notification configs",
    tag: 'ETA',
    access: 'eta.manage',
    host: 'site',
    query: Type.Object({ ...pagingQuery(SORTABLE) }, { additionalProperties: false }),
    response: ListResponse(EtaConfigResponse),
    handler: async ({ query, transaction }) => {
      const paging = readPaging(query, SORTABLE, 'created_at');
      const [rows, total] = await transaction((em) => listEtaConfigs(em, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }));
      return listBody(rows.map(toEtaConfigResponse), total, paging);
    },
  }),
  defineOperation({
    id: 'eta.notification_config.upsert',
    method: 'PUT',
    path: '/eta/notification-config',
    summary: 'Create or update an ETA notification config (by id, else by trigger_type + recipient_type + delivery_method)',
    description:
      'Without id, the config with the same trigger_type, recipient_type and delivery_method is updated, or created. With id, that config is updated ' +
      '(409 ETA_CONFIG_EXISTS if its new key is taken). Omitted debounce_seconds / enabled keep their value (defaults 300 and true); an omitted template ' +
      'is kept, template: null restores the default. Unknown template variables are 400 UNKNOWN_TEMPLATE_VARIABLE naming the field.',
    tag: 'ETA',
    access: 'eta.manage',
    host: 'site',
    body: EtaConfigUpsertBody,
    response: DataResponse(EtaConfigResponse),
    handler: async ({ body, site, actor, transaction }) => {
      const { config } = await transaction((em) => upsertEtaConfig(em, actor, requireSite(site).id, body));
      return { data: toEtaConfigResponse(config) };
    },
  }),
];
