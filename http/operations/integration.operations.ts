import { Type } from 'typebox';
import { ListResponse, pageOfWholeList, pageQuery } from '../pagination.ts';
import type { Services } from '../../app/services.ts';
import { connectIntegration } from '../../engine/integrations/connect.ts';
import { ConnectStateSigner } from '../../engine/integrations/connect-state.ts';
import { deleteIntegration, listIntegrations, updateIntegration, type IntegrationContext } from '../../engine/integrations/integration.service.ts';
import { DEVELOPMENT_DEFAULTS, PROVIDERS } from '../../engine/integrations/providers.ts';
import type { AuditActor } from '../../persistence/audit.ts';
import type { Site } from '../../persistence/entities/site.entity.ts';
import { defineOperation } from '../operation.ts';
import { DataResponse, Deleted } from '../schemas/common.schema.ts';
import {
  AvailableIntegrationResponse,
  ConnectIntegrationBody,
  ConnectIntegrationResponse,
  IntegrationCategory,
  IntegrationKey,
  SiteIntegrationResponse,
  toAvailableIntegrationResponse,
  toSiteIntegrationResponse,
  UpdateIntegrationBody,
} from '../schemas/integration.schema.ts';
import { integrationCallbackUrl } from '../integration-callback.ts';
import { requireSite } from '../tenancy.ts';

const KeyQuery = Type.Object({ integration_key: IntegrationKey }, { additionalProperties: false });

export const integrationOperations = [
  defineOperation({
    id: 'integration.available',
    method: 'GET',
    path: '/integration/available',
    summary: 'The catalog of integrations a site can configure, with each config schema (secret fields typed password)',
    tag: 'Integrations',
    access: 'integration.manage',
    host: 'site',
    query: Type.Object({ category: Type.Optional(IntegrationCategory), ...pageQuery }, { additionalProperties: false }),
    response: ListResponse(AvailableIntegrationResponse),
    handler: async ({ query }) => {
      const data = PROVIDERS.filter((p) => !query.category || p.category === query.category).map((p) =>
        toAvailableIntegrationResponse(p, DEVELOPMENT_DEFAULTS[p.category] === p.key),
      );
      return pageOfWholeList(data, query);
    },
  }),
  defineOperation({
    id: 'integration.list',
    method: 'GET',
    path: '/integration',
    summary: "This site's configured integrations; secrets appear only as has_<field>",
    tag: 'Integrations',
    access: 'integration.manage',
    host: 'site',
    query: Type.Object({ category: Type.Optional(IntegrationCategory), integration_key: Type.Optional(IntegrationKey), ...pageQuery }, { additionalProperties: false }),
    response: ListResponse(SiteIntegrationResponse),
    handler: async ({ query, transaction }) => {
      const data = (await transaction((em) => listIntegrations(em, { category: query.category, integration_key: query.integration_key }))).map(toSiteIntegrationResponse);
      return pageOfWholeList(data, query);
    },
  }),
  defineOperation({
    id: 'integration.update',
    method: 'PUT',
    path: '/integration',
    summary: 'Configure a provider (created on first use), validated against its schema; is_active switches it on or off',
    description:
      'Secret fields are encrypted at rest and never returned: omit one to keep it, send "" to remove it. Activating a provider deactivates the active one of its category (one per category).',
    tag: 'Integrations',
    access: 'integration.manage',
    host: 'site',
    query: KeyQuery,
    body: UpdateIntegrationBody,
    response: DataResponse(SiteIntegrationResponse),
    handler: async ({ query, body, site, actor, services, transaction }) => ({
      data: toSiteIntegrationResponse(await transaction((em) => updateIntegration(em, integrationContext(services, actor, site), query.integration_key, body))),
    }),
  }),
  defineOperation({
    id: 'integration.connect',
    method: 'POST',
    path: '/integration/connect',
    summary: 'Connect a provider: OAuth providers answer with an authorization URL; key-based ones are checked and activated',
    tag: 'Integrations',
    access: 'integration.manage',
    host: 'site',
    body: ConnectIntegrationBody,
    response: DataResponse(ConnectIntegrationResponse),
    handler: async ({ body, site, actor, services, transaction }) => {
      const current = requireSite(site);
      const deps = {
        signer: new ConnectStateSigner(services.config.secretKey),
        now: services.clock.now(),
        callbackUrl: integrationCallbackUrl(services, current.subdomain),
        allowLoopback: services.config.webhookAllowLoopback,
      };
      const result = await transaction((em) => connectIntegration(em, integrationContext(services, actor, site), body, deps));
      return {
        data: {
          integration_data: toSiteIntegrationResponse(result.integration),
          provider_response: { connect_url: result.connectUrl, redirect_url: result.redirectUrl },
        },
      };
    },
  }),
  defineOperation({
    id: 'integration.delete',
    method: 'DELETE',
    path: '/integration',
    summary: "Remove the site's configuration of a provider, secrets included",
    tag: 'Integrations',
    access: 'integration.manage',
    host: 'site',
    query: KeyQuery,
    response: Deleted,
    handler: async ({ query, site, actor, services, transaction }) => {
      const row = await transaction((em) => deleteIntegration(em, integrationContext(services, actor, site), query.integration_key));
      return { data: { id: row.id, deleted: true as const } };
    },
  }),
];

function integrationContext(services: Services, actor: AuditActor, site: Site | null): IntegrationContext {
  return { actor, siteId: requireSite(site).id, crypto: services.crypto };
}
