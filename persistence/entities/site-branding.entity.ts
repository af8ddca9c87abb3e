import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/** A site's branding: names, colours, contact details and logo shown by its apps, emails and pages. One per site. */
export const SiteBrandingSchema = defineEntity({
  name: 'SiteBranding',
  tableName: 'site_branding',
  filters: siteFilter,
  properties: {
    siteId: p.string().primary(),
    companyName: p.string().nullable(),
    appName: p.string().nullable(),
    tagline: p.string().nullable(),
    /** A ready attachment holding the logo image. */
    logoAttachmentId: p.string().nullable(),
    primaryColor: p.string().nullable(),
    secondaryColor: p.string().nullable(),
    accentColor: p.string().nullable(),
    supportEmail: p.string().nullable(),
    supportPhone: p.string().nullable(),
    website: p.string().nullable(),
    emailFooter: p.text().nullable(),
    ...timestamps(),
  },
});

export type SiteBranding = InferEntity<typeof SiteBrandingSchema>;
