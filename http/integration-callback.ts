import { randomUUID } from 'node:crypto';
import type { H3, H3Event } from 'h3';
import type { Services } from '../app/services.ts';
import { completeAuthorization, type CallbackQuery } from '../engine/integrations/authorize.ts';
import { ConnectStateSigner, MAX_STATE_LENGTH } from '../engine/integrations/connect-state.ts';
import { ApiError, toApiError } from './errors.ts';
import { readRequestId } from './request-input.ts';
import { parseHost } from './tenancy.ts';

const CALLBACK_PATH = '/api/integration/callback';

/** Where a provider sends the browser back after its consent screen: this site's callback on its public origin. */
export function integrationCallbackUrl(services: Services, subdomain: string): string {
  return services.config.publicUrl.replace('{site}', subdomain) + CALLBACK_PATH;
}

/**
 * `GET /api/integration/callback?state=&code=` (or `&error=`): the provider's redirect at the end of an OAuth
 * connect, reached by the admin's browser, not an API client: authorized by the signed `state` alone, outside the
 * JSON operations because its answer is a redirect. With the `redirect_url` given to connect, the browser goes back
 * there with `integration_key`, `status` (`connected` or `failed`) and, on failure, `error`; without one the answer
 * is JSON. A state that is not this server's, another site's, expired or already used is a 400/409 in JSON.
 */
export function mountIntegrationCallback(app: H3, services: Services): void {
  app.get(CALLBACK_PATH, (event) => callback(services, event));
}

async function callback(services: Services, event: H3Event): Promise<Response> {
  const requestId = readRequestId(event.req.headers, randomUUID);
  try {
    const forwarded = services.config.trustProxy ? event.req.headers.get('x-forwarded-host') : null;
    const target = parseHost(forwarded ?? event.req.headers.get('host'), services.config.baseDomain);
    if (target.kind !== 'site') throw ApiError.badRequest('SITE_HOST_REQUIRED', 'The integration callback is served on a site host');
    const site = await services.sites.resolve(target.subdomain);
    const outcome = await completeAuthorization(
      {
        orm: services.db.orm,
        crypto: services.crypto,
        signer: new ConnectStateSigner(services.config.secretKey),
        now: services.clock.now(),
        callbackUrl: integrationCallbackUrl(services, site.subdomain),
        tokenUrls: services.config.oauthTokenUrls,
        requestId,
      },
      site.id,
      readQuery(event.url),
    );
    const status = outcome.error ? 'failed' : 'connected';
    const key = outcome.integration.integrationKey;
    // A state signed before connect checked its redirect URL may hold one the parser refuses: answered in JSON.
    if (outcome.state.redirect_url && URL.canParse(outcome.state.redirect_url)) {
      const back = new URL(outcome.state.redirect_url);
      back.searchParams.set('integration_key', key);
      back.searchParams.set('status', status);
      if (outcome.error) back.searchParams.set('error', outcome.error.code);
      return new Response(null, { status: 302, headers: { location: back.href, 'x-request-id': requestId, 'cache-control': 'no-store' } });
    }
    const body = outcome.error ? new ApiError(outcome.error.status, outcome.error.code, outcome.error.message).toBody() : { data: { integration_key: key, status } };
    return json(outcome.error?.status ?? 200, body, requestId);
  } catch (thrown) {
    const error = toApiError(thrown);
    if (error.status >= 500) services.logger.error({ err: thrown instanceof Error ? thrown.message : String(thrown), req_id: requestId }, 'integration callback failed');
    return json(error.status, error.toBody(), requestId);
  }
}

function readQuery(url: URL): CallbackQuery {
  const value = (name: string, limit = 2048) => url.searchParams.get(name)?.slice(0, limit) || undefined;
  // Cut to what a state can be, not shorter: a cut state fails its signature check.
  const state = value('state', MAX_STATE_LENGTH);
  if (!state) throw ApiError.badRequest('VALIDATION_FAILED', 'state is required', [{ field: 'state', message: 'required' }]);
  return { state, code: value('code'), error: value('error'), error_description: value('error_description') };
}

function json(status: number, body: unknown, requestId: string): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'x-request-id': requestId, 'cache-control': 'no-store' } });
}
