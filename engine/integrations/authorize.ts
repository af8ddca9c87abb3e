import type { MikroORM } from '@mikro-orm/postgresql';
import { recordAudit } from '../../persistence/audit.ts';
import { SiteIntegrationSchema, type SiteIntegration } from '../../persistence/entities/site-integration.entity.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { DomainError } from '../domain-error.ts';
import type { ConnectState, ConnectStateSigner } from './connect-state.ts';
import { applyConfigPatch, readFullConfig } from './integration-config.ts';
import { activate, integrationAuditView, lockCategory, requireProvider, type IntegrationContext } from './integration.service.ts';
import { exchangeCode, type OAuthGrant } from './oauth-token.ts';

/** What the provider's redirect brings back: `state` always, then `code` on consent or `error` on refusal. */
export type CallbackQuery = { state: string; code?: string; error?: string; error_description?: string };

export type AuthorizeDeps = {
  orm: MikroORM;
  crypto: FieldCrypto;
  signer: ConnectStateSigner;
  now: Date;
  /** The redirect URI the authorization named (this site's callback URL): the code exchange must name it again. */
  callbackUrl: string;
  /** Token URLs replacing the providers' own, by integration key (tests). */
  tokenUrls: Readonly<Record<string, string>>;
  requestId: string;
};

export type AuthorizeOutcome = { integration: SiteIntegration; state: ConnectState; error: { status: number; code: string; message: string } | null };

/**
 * The end of an OAuth connect: the `state` must be one this server signed for this site, unexpired, for an
 * integration still `pending_authorization`. On consent the code is traded for the account's tokens (outside any
 * transaction: a network call, the integration `authorizing` meanwhile), then, in one transaction, the tokens are stored encrypted, the provider becomes its
 * category's active one and `connected`. A refusal at the provider (`error`) or a failed exchange leaves it
 * `configured` (connect again to retry). Either way the end is audited as `authorize`, by the user who connected.
 * @throws DomainError 400 INVALID_CONNECT_STATE, 404, 409 NOT_PENDING_AUTHORIZATION
 */
export async function completeAuthorization(deps: AuthorizeDeps, siteId: string, query: CallbackQuery): Promise<AuthorizeOutcome> {
  const state = deps.signer.verify(query.state, deps.now);
  if (state.site_id !== siteId) throw DomainError.invalid('INVALID_CONNECT_STATE', 'The connect state belongs to another site', 'state');
  const provider = requireProvider(state.integration_key);
  const ctx: IntegrationContext = { actor: { userId: state.user_id, applicationId: null, requestId: deps.requestId }, siteId, crypto: deps.crypto };
  // Before the claim: a callback that carries neither must not leave the integration waiting in `authorizing`.
  if (!query.error && !query.code) throw DomainError.invalid('VALIDATION_FAILED', 'The callback carries neither code nor error', 'code');
  // The state is claimed first (pending → authorizing, under the category's lock), so that of two callbacks with it
  // (a reload during the exchange) one trades the code and the other is refused, rather than its refused second use
  // of the code overwriting the grant.
  const pending = await inTenantScope(deps.orm, { siteId }, async (em) => {
    await lockCategory(em, siteId, provider.category);
    const row = await integrationIn(em, state, 'pending_authorization');
    row.status = 'authorizing';
    await em.flush();
    return readFullConfig(deps.crypto, row);
  });
  let grant: OAuthGrant | null = null;
  let error: AuthorizeOutcome['error'] = query.error
    ? { status: 422, code: 'AUTHORIZATION_DENIED', message: `The provider answered ${query.error}${query.error_description ? `: ${query.error_description}` : ''}` }
    : null;
  if (!error) {
    try {
      grant = await exchangeCode(provider.oauth!, pending, query.code!, deps.callbackUrl, deps.tokenUrls[provider.key]);
    } catch (failure) {
      if (!(failure instanceof DomainError)) throw failure;
      error = { status: failure.status, code: failure.code, message: failure.message };
    }
  }
  const integration = await inTenantScope(deps.orm, { siteId }, async (em) => {
    await lockCategory(em, siteId, provider.category);
    const row = await integrationIn(em, state, 'authorizing');
    const before = integrationAuditView(row);
    if (grant) {
      applyConfigPatch(deps.crypto, row, provider, { account_id: grant.accountId, access_token: grant.accessToken, refresh_token: grant.refreshToken });
      await activate(em, ctx, row);
      row.status = 'connected';
    } else {
      row.status = 'configured';
    }
    recordAudit(em, ctx.actor, { siteId, action: 'authorize', entityType: 'Integration', entityId: row.id, before, after: { ...integrationAuditView(row), ...(error ? { error: error.code } : {}) } });
    await em.flush();
    return row;
  });
  return { integration, state, error };
}

/** The integration the state names, in the status this step of the authorization expects. */
async function integrationIn(em: Parameters<Parameters<typeof inTenantScope>[2]>[0], state: ConnectState, status: string): Promise<SiteIntegration> {
  const row = await em.findOne(SiteIntegrationSchema, { id: state.integration_id, integrationKey: state.integration_key });
  if (!row) throw DomainError.notFound('Integration', state.integration_key);
  if (row.status !== status) {
    throw DomainError.conflict('NOT_PENDING_AUTHORIZATION', `${state.integration_key} is ${row.status}, not waiting for this authorization: connect it again`);
  }
  return row;
}
