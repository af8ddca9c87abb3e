import path from 'node:path';
import { Type, type Static } from 'typebox';

/** Content types accepted unless ATTACHMENT_ALLOWED_TYPES says otherwise: photos, PDFs, plain text and CSV. */
export const DEFAULT_ALLOWED_TYPES = 'image/jpeg,image/png,image/gif,image/webp,image/heic,application/pdf,text/plain,text/csv';

/** The attachment variables of the environment schema (read once by app/config.ts with the others). */
export const ATTACHMENT_ENV = {
  ATTACHMENT_STORAGE: Type.Union([Type.Literal('local'), Type.Literal('s3')], { default: 'local' }),
  ATTACHMENT_DIR: Type.Optional(Type.String({ minLength: 1 })),
  ATTACHMENT_MAX_BYTES: Type.Integer({ minimum: 1, maximum: 2_147_483_647, default: 26_214_400 }),
  ATTACHMENT_ALLOWED_TYPES: Type.String({ pattern: '^[a-z0-9.+*/-]+(,[a-z0-9.+*/-]+)*$', default: DEFAULT_ALLOWED_TYPES }),
  ATTACHMENT_URL_TTL_SECONDS: Type.Integer({ minimum: 10, maximum: 604_800, default: 900 }),
  ATTACHMENT_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/]+$' })),
  ATTACHMENT_S3_BUCKET: Type.Optional(Type.String({ minLength: 3 })),
  ATTACHMENT_S3_REGION: Type.String({ minLength: 1, default: 'us-east-1' }),
  ATTACHMENT_S3_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  ATTACHMENT_S3_ACCESS_KEY_ID: Type.Optional(Type.String({ minLength: 1 })),
  ATTACHMENT_S3_SECRET_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  ATTACHMENT_S3_FORCE_PATH_STYLE: Type.Boolean({ default: false }),
};

const AttachmentEnv = Type.Object(ATTACHMENT_ENV);
type AttachmentEnv = Static<typeof AttachmentEnv>;

export type S3Settings = {
  bucket: string;
  region: string;
  /** An S3-compatible endpoint (MinIO, R2, ...); absent for AWS. */
  endpoint: string | undefined;
  /** Absent: the SDK's default credential chain (environment, instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  forcePathStyle: boolean;
};

export type AttachmentSettings = {
  storage: 'local' | 's3';
  /** Where the local driver keeps files (one folder per site). */
  directory: string;
  /** Largest file accepted, in bytes. */
  maxBytes: number;
  /** Accepted content types; `image/*` accepts a whole family. */
  allowedTypes: string[];
  /** How long a signed upload or download URL stays valid, in seconds. */
  urlTtlSeconds: number;
  /** Origin of the local driver's signed URLs, `{site}` replaced by the subdomain. */
  publicUrl: string;
  /** Set when `storage` is `s3`. */
  s3: S3Settings | null;
};

/**
 * The attachment settings from validated environment values.
 * @throws Error naming ATTACHMENT_S3_BUCKET when the S3 driver is chosen without a bucket
 */
export function toAttachmentSettings(env: AttachmentEnv & { BASE_DOMAIN: string; PORT: number }, dataDir: string): AttachmentSettings {
  if (env.ATTACHMENT_STORAGE === 's3' && !env.ATTACHMENT_S3_BUCKET) {
    throw new Error('Invalid environment variable ATTACHMENT_S3_BUCKET: required when ATTACHMENT_STORAGE=s3');
  }
  const keyId = env.ATTACHMENT_S3_ACCESS_KEY_ID;
  const secret = env.ATTACHMENT_S3_SECRET_ACCESS_KEY;
  const port = env.PORT === 80 ? '' : `:${env.PORT}`;
  return {
    storage: env.ATTACHMENT_STORAGE,
    directory: path.resolve(env.ATTACHMENT_DIR ?? path.join(dataDir, 'attachments')),
    maxBytes: env.ATTACHMENT_MAX_BYTES,
    allowedTypes: env.ATTACHMENT_ALLOWED_TYPES.split(','),
    urlTtlSeconds: env.ATTACHMENT_URL_TTL_SECONDS,
    publicUrl: env.ATTACHMENT_PUBLIC_URL ?? `http://{site}.${env.BASE_DOMAIN}${port}`,
    s3:
      env.ATTACHMENT_STORAGE === 's3'
        ? {
            bucket: env.ATTACHMENT_S3_BUCKET!,
            region: env.ATTACHMENT_S3_REGION,
            endpoint: env.ATTACHMENT_S3_ENDPOINT,
            credentials: keyId && secret ? { accessKeyId: keyId, secretAccessKey: secret } : undefined,
            forcePathStyle: env.ATTACHMENT_S3_FORCE_PATH_STYLE,
          }
        : null,
  };
}

/** Whether a content type is accepted: listed exactly, or its family listed as `family/*`. */
export function isAllowedType(settings: AttachmentSettings, contentType: string): boolean {
  const family = `${contentType.split('/')[0]}/*`;
  return settings.allowedTypes.includes(contentType) || settings.allowedTypes.includes(family);
}
