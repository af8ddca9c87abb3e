import type { ApiAnswer, Transport } from './transport.ts';

/** A refused call: the status and the API's `{error, code}`, kept so the simulator can react (409 on a claim race). */
export class SimApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The error body's `details` (a refused dispatch's decision, ...). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** Who makes a call: the office's API key, or a driver's session (refreshed when its access token expires). */
export type Credential = { headers(): Record<string, string>; refresh?(api: SiteApi): Promise<void> };

export const apiKeyCredential = (apiKey: string): Credential => ({ headers: () => ({ 'x-api-key': apiKey }) });

type SessionBody = { access_token: string; refresh_token: string };

/** A signed-in driver app: access token in the header, the single-use refresh token rotated on expiry. */
export class SessionCredential implements Credential {
  constructor(
    public accessToken: string,
    private refreshToken: string,
  ) {}

  static async signIn(api: SiteApi, email: string, password: string): Promise<SessionCredential> {
    const session = await api.call<SessionBody>('POST', '/api/auth/signin', { email, password }, null);
    return new SessionCredential(session.access_token, session.refresh_token);
  }

  headers(): Record<string, string> {
    return { 'x-access-token': this.accessToken };
  }

  async refresh(api: SiteApi): Promise<void> {
    const session = await api.call<SessionBody>('POST', '/api/auth/refresh', { refresh_token: this.refreshToken }, null);
    this.accessToken = session.access_token;
    this.refreshToken = session.refresh_token;
  }
}

/** The REST calls the simulator makes, each as whoever makes it (the office or one driver). */
export class SiteApi {
  /** Calls made, by operation, for the run's statistics. */
  readonly calls = new Map<string, number>();
  readonly staff: Credential;

  constructor(
    readonly transport: Transport,
    staffKey: string,
  ) {
    this.staff = apiKeyCredential(staffKey);
  }

  /** The `data` of a 2xx answer; anything else throws SimApiError. `null`: no credential (sign-in). */
  async call<T>(method: string, path: string, body?: unknown, credential: Credential | null = this.staff): Promise<T> {
    let answer = await this.raw(method, path, body, credential);
    if (answer.status === 401 && credential?.refresh && codeOf(answer) === 'TOKEN_EXPIRED') {
      await credential.refresh(this);
      answer = await this.raw(method, path, body, credential);
    }
    if (answer.status >= 200 && answer.status < 300) return (answer.body as { data: T }).data;
    const error = (answer.body ?? {}) as { error?: string; details?: Record<string, unknown> };
    const code = codeOf(answer);
    throw new SimApiError(answer.status, code, `${method} ${path} → ${answer.status} ${code}: ${error.error ?? JSON.stringify(answer.body)}`, error.details ?? {});
  }

  raw(method: string, path: string, body: unknown, credential: Credential | null): Promise<ApiAnswer> {
    const name = `${method} ${path.split('?')[0]}`;
    this.calls.set(name, (this.calls.get(name) ?? 0) + 1);
    return this.transport.send(method, path, credential?.headers() ?? {}, body);
  }
}

const codeOf = (answer: ApiAnswer): string => ((answer.body ?? {}) as { code?: string }).code ?? 'UNKNOWN';
