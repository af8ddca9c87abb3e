import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '../../persistence/secrets.ts';
import { DomainError } from '../domain-error.ts';

/**
 * What an OAuth `state` carries back from the provider: which site and integration started the flow, who started it
 * (the audit's actor of its end), where to send their browser afterwards, until when.
 */
export type ConnectState = {
  site_id: string;
  integration_id: string;
  integration_key: string;
  user_id: string | null;
  redirect_url: string | null;
  expires_at: number;
  nonce: string;
};

/** How long a user has to finish the provider's consent screen. */
export const CONNECT_STATE_TTL_MS = 15 * 60 * 1000;

/** The longest `redirect_url` a state carries, as the URL parser writes it (what connect checks and signs). */
export const MAX_REDIRECT_URL_LENGTH = 1024;

/**
 * The longest `state` the callback reads. A state with the longest redirect URL fits with room to spare: the parser
 * writes a URL in ASCII, which JSON would escape to at most twice its length (the `uri` format refuses `\` and `"`
 * anyway), the other fields take under 400 bytes, base64url adds a third and the MAC 44 characters: under 3,400.
 */
export const MAX_STATE_LENGTH = 4096;

/**
 * Signs and verifies OAuth `state` values: `<base64url JSON>.<HMAC-SHA256>`, keyed with a key derived from
 * SECRET_KEY for this purpose only, so a state cannot be forged, altered (another site, another integration) or
 * replayed after it expires.
 */
export class ConnectStateSigner {
  private readonly key: Buffer;

  constructor(secretKey: string) {
    this.key = Buffer.from(hkdfSync('sha256', secretKey, 'dispatch-integration-connect', 'state', 32));
  }

  sign(state: Omit<ConnectState, 'expires_at' | 'nonce'>, now: Date): string {
    const full: ConnectState = { ...state, expires_at: now.getTime() + CONNECT_STATE_TTL_MS, nonce: randomBytes(12).toString('base64url') };
    const body = Buffer.from(JSON.stringify(full)).toString('base64url');
    return `${body}.${this.mac(body)}`;
  }

  /** @throws DomainError 400 INVALID_CONNECT_STATE when tampered with, malformed or expired */
  verify(value: string, now: Date): ConnectState {
    const [body, mac] = value.split('.');
    if (!body || !mac || !constantTimeEqual(mac, this.mac(body))) throw invalid('is not a state this server signed');
    const state = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as ConnectState;
    if (state.expires_at < now.getTime()) throw invalid('has expired');
    return state;
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}

function invalid(reason: string): DomainError {
  return DomainError.invalid('INVALID_CONNECT_STATE', `The connect state ${reason}`, 'state');
}
