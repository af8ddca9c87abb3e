import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../../persistence/audit.ts';
import type { SiteIntegration } from '../../persistence/entities/site-integration.entity.ts';
import { DomainError } from '../domain-error.ts';
import { verifySmtp, type SmtpConfig } from '../notify/smtp-sender.ts';
import type { ProviderDefinition } from './catalog.ts';
import { MAX_REDIRECT_URL_LENGTH, type ConnectStateSigner } from './connect-state.ts';
import { readFullConfig, type ConfigPatch } from './integration-config.ts';
import { activate, integrationAuditView, requireProvider, updateIntegration, type IntegrationContext } from './integration.service.ts';

export type ConnectInput = { integration_key: string; config?: ConfigPatch; redirect_url?: string };

export type ConnectDeps = {
  signer: ConnectStateSigner;
  now: Date;
  /** Where the provider sends the browser back with `code` and `state` (this site's callback URL). */
  callbackUrl: string;
  /** Lets connection checks reach loopback servers (tests). */
  allowLoopback: boolean;
};

export type ConnectResult = { integration: SiteIntegration; connectUrl: string | null; redirectUrl: string | null };

/** Live checks for key-based providers: they prove the credentials work before the provider goes live. */
const CONNECTION_CHECKS: Readonly<Record<string, (config: Record<string, unknown>, deps: ConnectDeps) => Promise<void>>> = {
  smtp: (config, deps) => verifySmtp(config as SmtpConfig, { allowLoopback: deps.allowLoopback }),
};

/**
 * The connect flow. The supplied config is saved first (validated, secrets encrypted). A provider with OAuth
 * onboarding is left inactive, `pending_authorization`, and the answer carries the provider's authorization URL
 * with a signed, expiring `state`. A key-based provider is checked (SMTP logs in) and activated at once, replacing
 * the category's active provider.
 * @throws DomainError 404 INTEGRATION_UNKNOWN, 400 INVALID_INTEGRATION_CONFIG / VALIDATION_FAILED (`redirect_url`),
 *   422 INTEGRATION_CHECK_FAILED
 */
export async function connectIntegration(em: EntityManager, ctx: IntegrationContext, input: ConnectInput, deps: ConnectDeps): Promise<ConnectResult> {
  const provider = requireProvider(input.integration_key);
  const redirectUrl = input.redirect_url === undefined ? null : toRedirectUrl(input.redirect_url);
  const integration = await updateIntegration(em, ctx, provider.key, { config: input.config ?? {} });
  const before = integrationAuditView(integration);
  if (provider.oauth) {
    integration.status = 'pending_authorization';
    const connectUrl = authorizationUrl(provider, integration, ctx, redirectUrl, deps);
    audit(em, ctx, integration, before);
    await em.flush();
    return { integration, connectUrl, redirectUrl: redirectUrl ?? deps.callbackUrl };
  }
  await checkConnection(provider, readFullConfig(ctx.crypto, integration), deps);
  await activate(em, ctx, integration);
  integration.status = 'connected';
  audit(em, ctx, integration, before);
  await em.flush();
  return { integration, connectUrl: null, redirectUrl };
}

/**
 * The redirect URL as the callback will read it back from the state: parsed here (a port past 65535 passes the
 * schema's `uri` format but not the URL parser, which the callback runs after the integration is connected) and no
 * longer once written out than a state can carry (non-ASCII characters come out percent-encoded, up to 9 each).
 * @throws DomainError 400 VALIDATION_FAILED naming `redirect_url`
 */
function toRedirectUrl(value: string): string {
  const href = URL.canParse(value) ? new URL(value).href : null;
  if (href === null) throw DomainError.invalid('VALIDATION_FAILED', 'redirect_url is not a URL this server can redirect to', 'redirect_url');
  if (href.length > MAX_REDIRECT_URL_LENGTH) {
    throw DomainError.invalid('VALIDATION_FAILED', `redirect_url is ${href.length} characters once encoded; at most ${MAX_REDIRECT_URL_LENGTH}`, 'redirect_url');
  }
  return href;
}

async function checkConnection(provider: ProviderDefinition, config: Record<string, unknown>, deps: ConnectDeps): Promise<void> {
  const check = Object.hasOwn(CONNECTION_CHECKS, provider.key) ? CONNECTION_CHECKS[provider.key] : undefined;
  if (!check) return;
  try {
    await check(config, deps);
  } catch (error) {
    if (error instanceof DomainError) throw error;
    // The provider's own message (e.g. "Invalid login: 535 ...") helps the admin; it never contains the secret.
    const reason = error instanceof Error ? error.message.slice(0, 300) : 'unknown error';
    throw DomainError.unprocessable('INTEGRATION_CHECK_FAILED', `${provider.name} check failed: ${reason}`);
  }
}

function authorizationUrl(provider: ProviderDefinition, integration: SiteIntegration, ctx: IntegrationContext, redirectUrl: string | null, deps: ConnectDeps): string {
  const oauth = provider.oauth!;
  const state = deps.signer.sign(
    { site_id: integration.siteId, integration_id: integration.id, integration_key: provider.key, user_id: ctx.actor.userId, redirect_url: redirectUrl },
    deps.now,
  );
  const url = new URL(oauth.authorizeUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', String(readFullConfig(ctx.crypto, integration)[oauth.clientIdField] ?? ''));
  url.searchParams.set('scope', oauth.scope);
  url.searchParams.set('redirect_uri', deps.callbackUrl);
  url.searchParams.set('state', state);
  return url.href;
}

function audit(em: EntityManager, ctx: IntegrationContext, integration: SiteIntegration, before: Record<string, unknown>): void {
  recordAudit(em, ctx.actor, {
    siteId: ctx.siteId,
    action: 'connect',
    entityType: 'Integration',
    entityId: integration.id,
    before,
    after: integrationAuditView(integration),
  });
}
