import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { ATTACHMENT_ENV, toAttachmentSettings, type AttachmentSettings } from '../engine/attachments/attachment-settings.ts';

/**
 * Every environment variable the service reads. The README's table is written from this list;
 * nothing else in the code reads `process.env`.
 */
const EnvSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development',
  }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  BIND_ADDRESS: Type.String({ minLength: 1, default: '0.0.0.0' }),
  BASE_DOMAIN: Type.String({ pattern: '^[a-z0-9.-]+$', default: 'localhost' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  DATA_DIR: Type.String({ minLength: 1, default: './.data' }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  REDIS_PREFIX: Type.String({ pattern: '^[A-Za-z0-9:_-]+$', default: 'dispatch' }),
  QUEUE_SWEEP_GRACE_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 300 }),
  QUEUE_SWEEP_INTERVAL_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 30 }),
  SECRET_KEY: Type.Optional(Type.String({ minLength: 32 })),
  LOG_LEVEL: Type.Union([Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')], {
    default: 'info',
  }),
  ACCESS_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 86_400, default: 900 }),
  REFRESH_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 3600, maximum: 31_536_000, default: 2_592_000 }),
  RATE_LIMIT_POINTS: Type.Integer({ minimum: 1, default: 600 }),
  RATE_LIMIT_WINDOW_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 60 }),
  SIGNIN_FAILURE_LIMIT: Type.Integer({ minimum: 1, default: 10 }),
  SIGNIN_FAILURE_WINDOW_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 900 }),
  SEED_DEMO: Type.Boolean({ default: true }),
  TRUST_PROXY: Type.Boolean({ default: false }),
  TRUST_PROXY_HOPS: Type.Integer({ minimum: 1, maximum: 10, default: 1 }),
  RESPONSE_VALIDATION: Type.Boolean({ default: false }),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/]*\\{site\\}[^/]*$' })),
  WEBHOOK_ALLOW_LOOPBACK: Type.Boolean({ default: false }),
  OAUTH_TOKEN_URLS: Type.Optional(Type.String({ minLength: 2 })),
  MAPPING_ALLOW_PRIVATE_NETWORKS: Type.Boolean({ default: false }),
  ...ATTACHMENT_ENV,
  TRACK_POINT_INTERVAL_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 30 }),
  TRACK_POINT_DISTANCE_METERS: Type.Integer({ minimum: 1, maximum: 100_000, default: 200 }),
  DRIVER_DISCONNECT_GRACE_SECONDS: Type.Number({ minimum: 0, maximum: 3600, default: 60 }),
  LOCATION_RATE_LIMIT_PER_SECOND: Type.Integer({ minimum: 1, maximum: 1000, default: 5 }),
  REQUEUE_GRACE_SECONDS: Type.Number({ minimum: 1, maximum: 86_400, default: 120 }),
  SHUTDOWN_GRACE_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000 }),
});

type Env = Static<typeof EnvSchema>;

export type Config = {
  env: Env['NODE_ENV'];
  port: number;
  bindAddress: string;
  baseDomain: string;
  /** PostgreSQL connection string; absent means the embedded PGlite database under `dataDir`. */
  databaseUrl: string | undefined;
  databasePoolSize: number;
  dataDir: string;
  redisUrl: string | undefined;
  redisPrefix: string;
  /**
   * With Redis: how long a relayed event's job or a webhook retry may stay unfinished before the queue sweeper asks
   * Redis whether it still has the job (and adds it again if not), and how often the sweeper runs.
   */
  queueSweep: { graceSeconds: number; intervalSeconds: number };
  /** 32+ bytes of key material for token signing and field encryption. */
  secretKey: string;
  logLevel: Env['LOG_LEVEL'];
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  rateLimit: { points: number; windowSeconds: number };
  /** Failed sign-ins allowed per account and host in a window before sign-in there answers 429. */
  signInFailures: { limit: number; windowSeconds: number };
  seedDemo: boolean;
  trustProxy: boolean;
  /** With `trustProxy`, how many proxies of ours append to X-Forwarded-For (a CDN before a load balancer: 2). */
  trustedProxyHops: number;
  /** Check every response against its declared schema and answer 500 on a mismatch (tests). */
  responseValidation: boolean;
  /** Sites' public origin, `{site}` standing for the subdomain: what links and redirects sent to browsers and providers start with. */
  publicUrl: string;
  /** Accept webhook URLs on loopback addresses (tests' local receivers); refused in production. */
  webhookAllowLoopback: boolean;
  /** OAuth token URLs replacing the providers' own, by integration key (tests' local providers); refused in production. */
  oauthTokenUrls: Record<string, string>;
  /** Let sites' mapping engines (OSRM, Nominatim base_url) live on private networks; default public only. */
  mappingAllowPrivateNetworks: boolean;
  /** Attachment storage, limits and signed URL lifetime (ATTACHMENT_* variables). */
  attachments: AttachmentSettings;
  /** Realtime (issue 5): the track throttle, the disconnect grace and the per-driver location event quota. */
  realtime: { trackThrottle: { intervalSeconds: number; distanceMeters: number }; disconnectGraceSeconds: number; locationEventsPerSecond: number };
  /**
   * How long a scheduled dispatch may stay pending past its `dispatch_at`, and a notification pending after it was
   * queued, before the sweep adds its queue job again (Redis keeps nothing on disk: its jobs may be gone).
   */
  requeueGraceSeconds: number;
  /** On SIGTERM/SIGINT, how long requests already running may take to answer before their connections are cut (ms). */
  shutdownGraceMs: number;
};

export class ConfigError extends Error {}

const validator = Compile(EnvSchema);

/**
 * Reads and validates the environment once. Throws a {@link ConfigError} naming the first bad variable.
 * In development, a missing SECRET_KEY is generated into `DATA_DIR/secret.key` (with a warning); in production it
 * is required.
 */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = source[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const env = validator.Default(validator.Convert(raw)) as Record<string, unknown>;
  const errors = validator.Errors(env);
  if (errors.length > 0) {
    const first = errors.find((e) => e.instancePath !== '') ?? errors[0]!;
    const name = first.instancePath.replace(/^\//, '') || 'environment';
    throw new ConfigError(`Invalid environment variable ${name}=${JSON.stringify(raw[name] ?? '')}: ${first.message}`);
  }
  const valid = env as Env;
  if (valid.WEBHOOK_ALLOW_LOOPBACK && valid.NODE_ENV === 'production') {
    // Loopback targets would let a tenant's webhook reach the platform's own services: production cannot opt in.
    throw new ConfigError('Invalid environment variable WEBHOOK_ALLOW_LOOPBACK=true: not allowed when NODE_ENV=production');
  }
  const dataDir = path.resolve(valid.DATA_DIR);
  // In production behind TLS on the standard port (providers refuse plain-http redirect URIs); else this server's own.
  const publicUrl =
    valid.PUBLIC_URL ?? (valid.NODE_ENV === 'production' ? `https://{site}.${valid.BASE_DOMAIN}` : `http://{site}.${valid.BASE_DOMAIN}${valid.PORT === 80 ? '' : `:${valid.PORT}`}`);
  return {
    env: valid.NODE_ENV,
    port: valid.PORT,
    bindAddress: valid.BIND_ADDRESS,
    baseDomain: valid.BASE_DOMAIN,
    databaseUrl: valid.DATABASE_URL,
    databasePoolSize: valid.DATABASE_POOL_SIZE,
    dataDir,
    redisUrl: valid.REDIS_URL,
    redisPrefix: valid.REDIS_PREFIX,
    queueSweep: { graceSeconds: valid.QUEUE_SWEEP_GRACE_SECONDS, intervalSeconds: valid.QUEUE_SWEEP_INTERVAL_SECONDS },
    secretKey: valid.SECRET_KEY ?? developmentSecret(valid.NODE_ENV, dataDir),
    logLevel: valid.LOG_LEVEL,
    accessTokenTtlSeconds: valid.ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtlSeconds: valid.REFRESH_TOKEN_TTL_SECONDS,
    rateLimit: { points: valid.RATE_LIMIT_POINTS, windowSeconds: valid.RATE_LIMIT_WINDOW_SECONDS },
    signInFailures: { limit: valid.SIGNIN_FAILURE_LIMIT, windowSeconds: valid.SIGNIN_FAILURE_WINDOW_SECONDS },
    seedDemo: valid.SEED_DEMO,
    trustProxy: valid.TRUST_PROXY,
    trustedProxyHops: valid.TRUST_PROXY_HOPS,
    responseValidation: valid.RESPONSE_VALIDATION,
    publicUrl,
    webhookAllowLoopback: valid.WEBHOOK_ALLOW_LOOPBACK,
    oauthTokenUrls: tokenUrls(valid),
    mappingAllowPrivateNetworks: valid.MAPPING_ALLOW_PRIVATE_NETWORKS,
    attachments: toAttachmentSettings({ ...valid, ATTACHMENT_PUBLIC_URL: valid.ATTACHMENT_PUBLIC_URL ?? publicUrl }, dataDir),
    realtime: {
      trackThrottle: { intervalSeconds: valid.TRACK_POINT_INTERVAL_SECONDS, distanceMeters: valid.TRACK_POINT_DISTANCE_METERS },
      disconnectGraceSeconds: valid.DRIVER_DISCONNECT_GRACE_SECONDS,
      locationEventsPerSecond: valid.LOCATION_RATE_LIMIT_PER_SECOND,
    },
    requeueGraceSeconds: valid.REQUEUE_GRACE_SECONDS,
    shutdownGraceMs: valid.SHUTDOWN_GRACE_MS,
  };
}

function tokenUrls(valid: Env): Record<string, string> {
  if (!valid.OAUTH_TOKEN_URLS) return {};
  // Tokens would go wherever this points: production uses the providers' own URLs only.
  if (valid.NODE_ENV === 'production') throw new ConfigError('Invalid environment variable OAUTH_TOKEN_URLS: not allowed when NODE_ENV=production');
  let parsed: unknown;
  try {
    parsed = JSON.parse(valid.OAUTH_TOKEN_URLS);
  } catch {
    parsed = null;
  }
  const urls = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? Object.entries(parsed) : [];
  if (urls.length === 0 || urls.some(([, url]) => typeof url !== 'string' || !/^https?:\/\//.test(url))) {
    throw new ConfigError('Invalid environment variable OAUTH_TOKEN_URLS: a JSON object of integration key to http(s) URL');
  }
  return Object.fromEntries(urls) as Record<string, string>;
}

function developmentSecret(env: Env['NODE_ENV'], dataDir: string): string {
  if (env === 'production') throw new ConfigError('Invalid environment variable SECRET_KEY: required in production');
  const file = path.join(dataDir, 'secret.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('hex');
  writeFileSync(file, secret, { mode: 0o600 });
  console.warn(`SECRET_KEY is not set: generated one into ${file} (set SECRET_KEY in production)`);
  return secret;
}
