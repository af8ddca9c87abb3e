import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** Where an encrypted value lives: it is bound to this place and cannot be copied to another row or site. */
export type FieldBinding = { siteId: string; table: string; column: string; rowId: string };

const KEY_ID = 'k1';

/**
 * Encrypts and decrypts secret columns (webhook secrets, integration credentials) with AES-256-GCM (DESIGN §4).
 * The key is derived from SECRET_KEY with HKDF; the stored form is `<key id>.<iv>.<tag>.<ciphertext>` (base64url),
 * and the site, table, column and row are the additional authenticated data, so a ciphertext moved elsewhere fails.
 */
export class FieldCrypto {
  private readonly key: Buffer;

  constructor(secretKey: string) {
    this.key = Buffer.from(hkdfSync('sha256', secretKey, 'dispatch-field-crypto', KEY_ID, 32));
  }

  encrypt(plain: string, binding: FieldBinding): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(aad(binding));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [KEY_ID, iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  /** @throws Error when the value was tampered with, moved, or written under another key */
  decrypt(stored: string, binding: FieldBinding): string {
    const [keyId, iv, tag, body] = stored.split('.');
    if (keyId !== KEY_ID || !iv || !tag || body === undefined) throw new Error('unknown encrypted field format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(aad(binding));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}

function aad(binding: FieldBinding): Buffer {
  return Buffer.from(`${binding.siteId}|${binding.table}|${binding.column}|${binding.rowId}`, 'utf8');
}
