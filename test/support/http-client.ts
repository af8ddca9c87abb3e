import { request } from 'node:http';

const REQUEST_TIMEOUT_MS = 20_000;

export type ApiResponse<T = Record<string, unknown>> = { status: number; headers: Record<string, string>; body: T; text: string };

export type Credentials = { apiKey?: string; accessToken?: string; headers?: Record<string, string> };

/**
 * A real HTTP client for the test server that sets the Host header, so `site` picks the tenant exactly as a
 * `<site>.localhost` request would. Any response that breaks its declared schema (the server checks in tests and
 * answers RESPONSE_SCHEMA_MISMATCH) fails the test at once.
 */
export class ApiClient {
  constructor(
    private readonly port: number,
    private readonly site: string | null,
    private readonly credentials: Credentials = {},
  ) {}

  as(credentials: Credentials): ApiClient {
    return new ApiClient(this.port, this.site, credentials);
  }

  onSite(site: string | null): ApiClient {
    return new ApiClient(this.port, site, this.credentials);
  }

  get<T = Record<string, unknown>>(path: string): Promise<ApiResponse<T>> {
    return this.send<T>('GET', path);
  }

  post<T = Record<string, unknown>>(path: string, body?: unknown): Promise<ApiResponse<T>> {
    return this.send<T>('POST', path, body);
  }

  put<T = Record<string, unknown>>(path: string, body?: unknown): Promise<ApiResponse<T>> {
    return this.send<T>('PUT', path, body);
  }

  send<T>(method: string, path: string, body?: unknown, raw?: string): Promise<ApiResponse<T>> {
    const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body));
    const headers: Record<string, string> = {
      host: this.site ? `${this.site}.localhost:${this.port}` : `localhost:${this.port}`,
      ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
      ...(this.credentials.apiKey ? { 'x-api-key': this.credentials.apiKey } : {}),
      ...(this.credentials.accessToken ? { 'x-access-token': this.credentials.accessToken } : {}),
      ...this.credentials.headers,
    };
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: this.port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const parsed = text && res.headers['content-type']?.includes('json') ? (JSON.parse(text) as T) : (text as T);
          const code = (parsed as { code?: unknown } | null)?.code;
          if (code === 'RESPONSE_SCHEMA_MISMATCH') {
            reject(new Error(`${method} ${path} answered outside its schema: ${text}`));
            return;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string>, body: parsed, text });
        });
      });
      req.on('error', reject);
      // A request the server never answers fails the test with its name instead of hanging until the test times out.
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`${method} ${path} got no answer within ${REQUEST_TIMEOUT_MS} ms (body ${payload ?? 'none'})`)));
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }
}
