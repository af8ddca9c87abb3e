/** What the connector needs to reach one site of the API. */
export type ConnectorConfig = {
  /** The site's origin (`http://demo.localhost:3000`): operations' paths (`/api/...`) and `/openapi.json` hang off it. */
  origin: URL;
  /** An application key (`dsk_...`), sent as `x-api-key`. */
  apiKey: string;
  /** Longest wait for one whole answer (SVC_API_TIMEOUT_MS, default 120 s). */
  timeoutMs: number;
};

/**
 * Longer than the slowest answer the API allows itself: a bulk distribution with `optimize_routes` solves for up to
 * 30 s (`time_budget_ms`) and then writes; a shorter wait reported a committed write as a network failure.
 */
const DEFAULT_TIMEOUT_MS = 120_000;

/** A configuration problem the user must fix; `main` prints it and exits non-zero. */
export class ConfigError extends Error {}

// Keys are `dsk_` + 256 bits in base64url (persistence/secrets.ts); the lower bound only catches truncated pastes.
const API_KEY_PATTERN = /^dsk_[A-Za-z0-9_-]{16,}$/;

// Paths a user may reasonably paste after the origin: the root or the API prefix. Anything else would be silently
// ignored, so it is refused instead.
const IGNORABLE_PATHS = new Set(['', '/', '/api', '/api/']);

/**
 * Reads SVC_API_URL, SVC_API_KEY and SVC_API_TIMEOUT_MS from `env`.
 * Throws ConfigError naming every missing or malformed variable (all at once, so one run shows every fix needed).
 */
export function readConnectorConfig(env: NodeJS.ProcessEnv): ConnectorConfig {
  const problems: string[] = [];
  const origin = parseApiUrl(env.SVC_API_URL, problems);
  const apiKey = env.SVC_API_KEY?.trim() ?? '';
  if (!apiKey) problems.push('SVC_API_KEY is not set: give an application API key of the site (dsk_...).');
  else if (!API_KEY_PATTERN.test(apiKey)) problems.push('SVC_API_KEY is malformed: expected an application key like dsk_... (base64url).');
  const timeoutMs = env.SVC_API_TIMEOUT_MS === undefined || env.SVC_API_TIMEOUT_MS.trim() === '' ? DEFAULT_TIMEOUT_MS : Number(env.SVC_API_TIMEOUT_MS);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100) problems.push(`SVC_API_TIMEOUT_MS is malformed: expected whole milliseconds of at least 100, not ${JSON.stringify(env.SVC_API_TIMEOUT_MS)}.`);
  if (problems.length > 0 || !origin) throw new ConfigError(problems.join('\n'));
  return { origin, apiKey, timeoutMs };
}

function parseApiUrl(raw: string | undefined, problems: string[]): URL | undefined {
  const value = raw?.trim() ?? '';
  if (!value) {
    problems.push('SVC_API_URL is not set: give the base URL of a site, e.g. http://demo.localhost:3000');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.push(`SVC_API_URL is not a valid URL: ${JSON.stringify(value)} (expected e.g. http://demo.localhost:3000)`);
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems.push(`SVC_API_URL must use http or https, not ${url.protocol}`);
  } else if (url.username || url.password) {
    problems.push('SVC_API_URL must not carry credentials: put the key in SVC_API_KEY.');
  } else if (!IGNORABLE_PATHS.has(url.pathname) || url.search || url.hash) {
    problems.push(`SVC_API_URL must be the site's origin (e.g. ${url.origin}), without a path, query or fragment.`);
  } else {
    return new URL(url.origin);
  }
  return undefined;
}
