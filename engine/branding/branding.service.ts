import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import type { Attachment } from '../../persistence/entities/attachment.entity.ts';
import { SiteBrandingSchema, type SiteBranding } from '../../persistence/entities/site-branding.entity.ts';
import { applyPatch, auditSnapshot } from '../admin/patch.ts';
import { requireReadyAttachment } from '../attachments/attachment.service.ts';
import { DomainError } from '../domain-error.ts';

export type BrandingPatch = {
  company_name?: string | null;
  app_name?: string | null;
  tagline?: string | null;
  logo_attachment_id?: string | null;
  primary_color?: string | null;
  secondary_color?: string | null;
  accent_color?: string | null;
  support_email?: string | null;
  support_phone?: string | null;
  website?: string | null;
  email_footer?: string | null;
};

const UPDATABLE = {
  company_name: 'companyName',
  app_name: 'appName',
  tagline: 'tagline',
  primary_color: 'primaryColor',
  secondary_color: 'secondaryColor',
  accent_color: 'accentColor',
  support_email: 'supportEmail',
  support_phone: 'supportPhone',
  website: 'website',
  email_footer: 'emailFooter',
} as const;

/** A site's branding and its logo (a ready attachment), or an unsaved blank one when never set. */
export type BrandingView = { branding: SiteBranding; logo: Attachment | null };

export async function getBranding(em: EntityManager, siteId: string): Promise<BrandingView> {
  const stored = await em.findOne(SiteBrandingSchema, { siteId });
  const branding = stored ?? blank(siteId);
  return { branding, logo: await logoOf(em, branding) };
}

/**
 * Updates the branding: a value sets a field, an omitted one stays, `null` clears it. The logo must be a confirmed
 * image attachment of the site.
 * @throws DomainError 404 / 409 ATTACHMENT_NOT_READY (field `logo_attachment_id`), 422 LOGO_NOT_IMAGE
 */
export async function updateBranding(em: EntityManager, actor: AuditActor, siteId: string, patch: BrandingPatch): Promise<BrandingView> {
  const created = await insertBlankRow(em, siteId);
  // Locked: concurrent updates apply one after the other, each audited against the row the previous one left.
  const branding = await em.findOneOrFail(SiteBrandingSchema, { siteId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  const before = created ? null : auditSnapshot(branding);
  if (patch.logo_attachment_id) {
    const logo = await requireReadyAttachment(em, patch.logo_attachment_id, 'logo_attachment_id');
    if (!logo.contentType.startsWith('image/')) throw DomainError.unprocessable('LOGO_NOT_IMAGE', `The logo must be an image, not ${logo.contentType}`);
  }
  if (patch.logo_attachment_id !== undefined) branding.logoAttachmentId = patch.logo_attachment_id;
  applyPatch(branding, patch, UPDATABLE);
  recordAudit(em, actor, { siteId, action: created ? 'create' : 'update', entityType: 'SiteBranding', entityId: siteId, before, after: auditSnapshot(branding) });
  await em.flush();
  return { branding, logo: await logoOf(em, branding) };
}

async function logoOf(em: EntityManager, branding: SiteBranding): Promise<Attachment | null> {
  if (!branding.logoAttachmentId) return null;
  // A logo deactivated since it was set reads as no logo rather than failing the whole branding.
  return requireReadyAttachment(em, branding.logoAttachmentId, 'logo_attachment_id').catch(() => null);
}

/**
 * The site's first update creates its row: inserted here unless there is one, so a concurrent first update waits
 * for this one and then updates the row instead of failing on the primary key (409 ALREADY_EXISTS).
 * @returns whether this call created it
 */
async function insertBlankRow(em: EntityManager, siteId: string): Promise<boolean> {
  const now = new Date();
  const inserted = await em.execute('insert into site_branding (site_id, created_at, updated_at) values (?, ?, ?) on conflict (site_id) do nothing returning site_id', [siteId, now, now]);
  return inserted.length > 0;
}

/** Not persisted (`em.create` would schedule an insert): a plain object of the entity's shape. */
function blank(siteId: string): SiteBranding {
  const now = new Date();
  return { ...blankValues(siteId), createdAt: now, updatedAt: now } as SiteBranding;
}

function blankValues(siteId: string) {
  return {
    siteId,
    companyName: null,
    appName: null,
    tagline: null,
    logoAttachmentId: null,
    primaryColor: null,
    secondaryColor: null,
    accentColor: null,
    supportEmail: null,
    supportPhone: null,
    website: null,
    emailFooter: null,
  };
}
