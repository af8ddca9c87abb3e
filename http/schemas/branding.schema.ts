import { Type } from 'typebox';
import type { BrandingView } from '../../engine/branding/branding.service.ts';
import type { AttachmentResponse } from './attachment.schema.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';
import { contact } from './organization.schema.ts';
import type { Static } from 'typebox';

const Color = Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: 'hex colour, e.g. #1A73E8' });
const Name = Type.String({ minLength: 1, maxLength: 100 });

export const UpdateBrandingBody = Type.Object(
  {
    company_name: Clearable(Name),
    app_name: Clearable(Name),
    tagline: Clearable(Type.String({ minLength: 1, maxLength: 200 })),
    logo_attachment_id: Clearable(Id),
    primary_color: Clearable(Color),
    secondary_color: Clearable(Color),
    accent_color: Clearable(Color),
    support_email: Clearable(contact.Email),
    support_phone: Clearable(contact.Phone),
    website: Clearable(Type.String({ pattern: '^https?://', maxLength: 300 })),
    email_footer: Clearable(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false, description: 'a value sets a field, an omitted one stays, null clears it' },
);

export const BrandingResponse = Type.Object(
  {
    site_id: Id,
    site_name: Type.String(),
    company_name: Nullable(Type.String()),
    app_name: Nullable(Type.String()),
    tagline: Nullable(Type.String()),
    logo_attachment_id: Nullable(Type.String()),
    logo_url: Nullable(Type.String({ description: 'a signed, expiring download URL of the logo' })),
    primary_color: Nullable(Type.String()),
    secondary_color: Nullable(Type.String()),
    accent_color: Nullable(Type.String()),
    support_email: Nullable(Type.String()),
    support_phone: Nullable(Type.String()),
    website: Nullable(Type.String()),
    email_footer: Nullable(Type.String()),
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export function toBrandingResponse({ branding: b }: BrandingView, siteName: string, logo: Static<typeof AttachmentResponse> | null) {
  return {
    site_id: b.siteId,
    site_name: siteName,
    company_name: b.companyName ?? null,
    app_name: b.appName ?? null,
    tagline: b.tagline ?? null,
    logo_attachment_id: b.logoAttachmentId ?? null,
    logo_url: logo?.remote_url ?? null,
    primary_color: b.primaryColor ?? null,
    secondary_color: b.secondaryColor ?? null,
    accent_color: b.accentColor ?? null,
    support_email: b.supportEmail ?? null,
    support_phone: b.supportPhone ?? null,
    website: b.website ?? null,
    email_footer: b.emailFooter ?? null,
    updated_at: b.updatedAt.toISOString(),
  };
}
