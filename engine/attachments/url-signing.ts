import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a signed transfer URL grants: one method on one attachment of one site until `expires` (Unix seconds). */
export type TransferGrant = {
  method: 'PUT' | 'GET';
  siteId: string;
  attachmentId: string;
  expires: number;
  /** Uploads only: the content type and exact size the upload must have. */
  contentType?: string;
  size?: number;
};

/** A key for transfer URLs only, derived from SECRET_KEY so a leaked URL key reveals nothing else. */
export function deriveTransferKey(secretKey: string): Buffer {
  return createHmac('sha256', secretKey).update('attachment-transfer-url/v1').digest();
}

/** HMAC-SHA256 of the grant, base64url: the `signature` query parameter. */
export function signTransfer(key: Buffer, grant: TransferGrant): string {
  const message = [grant.method, grant.siteId, grant.attachmentId, grant.expires, grant.contentType ?? '', grant.size ?? ''].join('\n');
  return createHmac('sha256', key).update(message).digest('base64url');
}

/**
 * Checks a presented signature in constant time, then the expiry against `nowMs`.
 * @returns `ok`, `invalid` (tampered, or signed for something else) or `expired`
 */
export function verifyTransfer(key: Buffer, grant: TransferGrant, signature: string, nowMs: number): 'ok' | 'invalid' | 'expired' {
  const expected = Buffer.from(signTransfer(key, grant));
  const presented = Buffer.from(signature);
  if (!Number.isSafeInteger(grant.expires) || presented.length !== expected.length || !timingSafeEqual(presented, expected)) return 'invalid';
  return grant.expires * 1000 <= nowMs ? 'expired' : 'ok';
}
