import type { Services } from '../../app/services.ts';
import { getBranding, updateBranding, type BrandingView } from '../../engine/branding/branding.service.ts';
import type { Site } from '../../persistence/entities/site.entity.ts';
import { defineOperation } from '../operation.ts';
import { BrandingResponse, toBrandingResponse, UpdateBrandingBody } from '../schemas/branding.schema.ts';
import { DataResponse } from '../schemas/common.schema.ts';
import { requireSite } from '../tenancy.ts';
import { present } from './attachment.operations.ts';

const TAG = 'Branding';

export const brandingOperations = [
  defineOperation({
    id: 'branding.get',
    method: 'GET',
    path: '/branding',
    summary: "The site's branding (names, colours, logo), readable before sign-in so apps can show it",
    tag: TAG,
    access: 'public',
    host: 'site',
    response: DataResponse(BrandingResponse),
    handler: async ({ site, services, transaction }) => {
      const current = requireSite(site);
      const view = await transaction((em) => getBranding(em, current.id), { siteId: current.id });
      return { data: await shape(services, current, view) };
    },
  }),
  defineOperation({
    id: 'branding.update',
    method: 'PUT',
    path: '/branding',
    summary: "Update the site's branding: a value sets a field, an omitted one stays, null clears it",
    tag: TAG,
    access: 'branding.manage',
    host: 'site',
    body: UpdateBrandingBody,
    response: DataResponse(BrandingResponse),
    handler: async ({ body, site, actor, services, transaction }) => {
      const current = requireSite(site);
      const view = await transaction((em) => updateBranding(em, actor, current.id, body));
      return { data: await shape(services, current, view) };
    },
  }),
];

async function shape(services: Services, site: Site, view: BrandingView) {
  return toBrandingResponse(view, site.name, view.logo ? await present(services, site, view.logo) : null);
}
