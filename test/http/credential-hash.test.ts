import { describe, expect, it } from 'vitest';
import { credentialHash } from '../../http/auth/authenticate.ts';
import { generateToken, hashToken } from '../../persistence/secrets.ts';

describe('a presented credential', () => {
  it('is looked up by the same digest the database stores for it', () => {
    for (const kind of ['apiKey', 'access', 'refresh', 'ticket'] as const) {
      const token = generateToken(kind);
      expect(credentialHash(token)).toBe(hashToken(token));
    }
    expect(credentialHash('dsk_é ünïcode')).toBe(hashToken('dsk_é ünïcode'));
  });
});
