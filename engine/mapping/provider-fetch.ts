import { assertAllowedEngineHost, type MappingNetworkPolicy } from './network-policy.ts';
import { mappingProviderError } from './provider-error.ts';

/** A remote engine's answer that we read up to this size; a bigger one is a misbehaving server, not a route. */
const MAX_BODY_BYTES = 20 * 1024 * 1024;

export type ProviderFetchOptions = {
  /** The engine's name, for error messages. */
  provider: string;
  /** The whole exchange (connect, headers and body) must finish within this. */
  timeoutMs: number;
  headers?: Record<string, string>;
  /** Where the engine may live; checked before dialling. */
  policy: MappingNetworkPolicy;
};

/** What the engine answered: any HTTP status, with a body that parsed as JSON. */
export type ProviderAnswer = { status: number; body: unknown };

/**
 * GETs `url` and parses the body as JSON. Never hangs: one `AbortSignal.timeout` covers the connection, the headers
 * and the body, so a server that accepts and then stalls fails at `timeoutMs` like one that never answers.
 * Redirects are refused (a routing engine has no reason to send us elsewhere).
 *
 * @returns the status and the parsed body, error statuses included (each adapter reads its engine's error format)
 * @throws DomainError 502 MAPPING_PROVIDER_ERROR on a network failure, a timeout, an oversized or non-JSON body
 */
export async function fetchProviderJson(url: URL, options: ProviderFetchOptions): Promise<ProviderAnswer> {
  const { provider, timeoutMs } = options;
  const signal = AbortSignal.timeout(timeoutMs);
  let text: string;
  let status: number;
  await assertAllowedEngineHost(url, options.policy, provider, signal);
  try {
    const response = await fetch(url, {
      headers: { accept: 'application/json', ...options.headers },
      signal,
      redirect: 'error',
    });
    status = response.status;
    text = await readCapped(response);
  } catch (error) {
    throw mappingProviderError(provider, describeFetchFailure(error, signal, timeoutMs));
  }
  try {
    return { status, body: JSON.parse(text) };
  } catch {
    throw mappingProviderError(provider, `answered HTTP ${status} with a body that is not JSON: ${excerpt(text)}`);
  }
}

/** A short, single-line piece of an unexpected body for error messages. */
export function excerpt(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 120 ? `${line.slice(0, 120)}…` : line || '(empty)';
}

async function readCapped(response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > MAX_BODY_BYTES) throw new BodyTooLarge();
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

class BodyTooLarge extends Error {}

function describeFetchFailure(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `no answer within ${timeoutMs} ms`;
  if (error instanceof BodyTooLarge) return `answer larger than ${MAX_BODY_BYTES} bytes`;
  // undici hides the system error (ECONNREFUSED, ENOTFOUND) in `cause`.
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const reason = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return `unreachable (${reason})`;
}
