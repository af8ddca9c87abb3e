import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';

/**
 * Recognisable prefixes so leaked credentials are easy to spot and scan for:
 * `dsk_` API keys, `dat_` access tokens, `drt_` refresh tokens, `dtk_` one-time tickets (pre-auth, reset).
 */
export const TOKEN_PREFIXES = { apiKey: 'dsk', access: 'dat', refresh: 'drt', ticket: 'dtk' } as const;

/** A new random credential: prefix + 256 bits, base64url. */
export function generateToken(kind: keyof typeof TOKEN_PREFIXES): string {
  return `${TOKEN_PREFIXES[kind]}_${randomBytes(32).toString('base64url')}`;
}

/** SHA-256 of a high-entropy token: what the database stores and looks up. (Passwords use Argon2id instead.) */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Argon2id with the library's defaults (OWASP's recommended parameters). */
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

const DUMMY_HASH = '$argon2id$v=19$m=19456,t=2,p=1$kcei2Xv0uYETDAyoq2Rj+g$rdKxAwfkmxI41QS8BFeZEsPkzWhIKwZg7hOUOY9aCbQ';

/** Verifies a password; with no stored hash it still spends the same time, so timing reveals no accounts. */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  if (!stored) {
    await verify(DUMMY_HASH, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
