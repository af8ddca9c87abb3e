import { DomainError } from '../domain-error.ts';
import type { OAuthFlow } from './catalog.ts';

/** What a provider grants for a site's account once its admin consented: kept in the integration's config. */
export type OAuthGrant = { accountId: string | null; accessToken: string; refreshToken: string | null };

/** How long the provider has to answer the code exchange. */
const EXCHANGE_TIMEOUT_MS = 10_000;

/**
 * Trades the authorization code for the account's tokens (RFC 6749 §4.1.3, form-encoded, as Stripe Connect and Slack
 * take it): the client id and secret from the site's config, the same redirect URI the authorization named.
 * `tokenUrl` replaces the provider's own (tests point it at a local server).
 * @throws DomainError 502 AUTHORIZATION_FAILED with the provider's reason when it refuses, times out or answers
 *   something else than a grant
 */
export async function exchangeCode(oauth: OAuthFlow, config: Record<string, unknown>, code: string, redirectUri: string, tokenUrl = oauth.tokenUrl): Promise<OAuthGrant> {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    client_id: String(config[oauth.clientIdField] ?? ''),
    client_secret: String(config[oauth.clientSecretField] ?? ''),
  });
  let answer: Record<string, unknown>;
  try {
    const response = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form,
      signal: AbortSignal.timeout(EXCHANGE_TIMEOUT_MS),
    });
    answer = (await response.json()) as Record<string, unknown>;
    // Slack answers 200 with ok: false; Stripe a 4xx with error.
    if (!response.ok || answer.ok === false || answer.error) throw new Error(String(answer.error_description ?? answer.error ?? `HTTP ${response.status}`));
  } catch (error) {
    throw failed(error instanceof Error ? error.message : String(error));
  }
  const accessToken = answer.access_token;
  if (typeof accessToken !== 'string' || accessToken === '') throw failed('the answer carries no access_token');
  const account = oauth.accountOf(answer);
  return {
    accountId: typeof account === 'string' ? account : null,
    accessToken,
    refreshToken: typeof answer.refresh_token === 'string' ? answer.refresh_token : null,
  };
}

function failed(reason: string): DomainError {
  return new DomainError(502, 'AUTHORIZATION_FAILED', `The provider did not grant access: ${reason.slice(0, 300)}`);
}
