import type { IncomingMessage } from 'node:http';
import type { H3Event } from 'h3';
import type { TSchema } from 'typebox';
import { ApiError } from './errors.ts';

/**
 * Largest accepted request body: the largest valid job (200 stops, each note at its 2,000-character limit, in
 * multi-byte text) fits, with room for its addresses.
 */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * The query string as an object for validation: array-typed parameters collect repeated and comma-separated
 * values (`?ids=a&ids=b`, `?ids=a,b`); other parameters take their last value.
 */
export function readQuery(url: URL, schema: TSchema): Record<string, unknown> {
  const properties = (schema as { properties?: Record<string, { type?: string }> }).properties ?? {};
  const query: Record<string, unknown> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    if (values.some((value) => value.includes('\u0000'))) throw nulCharacter(key);
    query[key] = properties[key]?.type === 'array' ? values.flatMap((v) => v.split(',')).filter(Boolean) : values.at(-1);
  }
  return query;
}

/**
 * The JSON body, which must be an object. An empty body reads as `{}` so the schema names missing fields.
 * @throws ApiError 413 BODY_TOO_LARGE, 415 UNSUPPORTED_MEDIA_TYPE, 400 INVALID_JSON / INVALID_BODY
 */
export async function readJsonBody(event: H3Event): Promise<unknown> {
  // Read from the socket, counting: a body sent without a length (chunked) is cut off at the limit rather than
  // held whole in memory first. And the Fetch API drops a GET's body, which GET /dispatch/available-drivers takes
  // (as the spec shows).
  const node = event.runtime?.node?.req;
  const declared = Number(event.req.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES && !node) throw tooLarge();
  // An HTTP/1 request: the server is node:http's (app/server.ts).
  const text = node ? await readNodeBody(node as IncomingMessage) : await event.req.text();
  if (Buffer.byteLength(text) > MAX_BODY_BYTES) throw tooLarge();
  if (text.trim() === '') return {};
  const type = event.req.headers.get('content-type') ?? '';
  if (!/^application\/(.+\+)?json\b/i.test(type)) {
    throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw ApiError.badRequest('INVALID_JSON', 'The request body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw ApiError.badRequest('INVALID_BODY', 'The request body must be a JSON object');
  }
  // PostgreSQL stores no NUL, and no lone UTF-16 surrogate, in text or jsonb: refused here, naming the field, rather
  // than failing at the database. The text is searched first (a native scan); the value is walked only when an escape
  // that can produce one appears in it (decoded UTF-8 never holds a lone surrogate: a bad byte reads as U+FFFD).
  if (text.includes('\\u0000')) {
    const path = firstStringPath(value, '', (s) => s.includes('\u0000'));
    if (path !== null) throw nulCharacter(path);
  }
  if (SURROGATE_ESCAPE.test(text)) {
    const path = firstStringPath(value, '', (s) => !s.isWellFormed());
    if (path !== null) throw loneSurrogate(path);
  }
  return value;
}

/** A JSON escape of a UTF-16 surrogate (U+D800..U+DFFF), lone or paired. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** The path (`stops.1.city`) of the first string in `value`, its keys included, that `isBad`; null when none is. */
function firstStringPath(value: unknown, path: string, isBad: (text: string) => boolean): string | null {
  if (typeof value === 'string') return isBad(value) ? path : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, child] of Object.entries(value)) {
    const childPath = path ? `${path}.${key}` : key;
    if (isBad(key)) return childPath;
    const found = firstStringPath(child, childPath, isBad);
    if (found !== null) return found;
  }
  return null;
}

function nulCharacter(field: string): ApiError {
  return ApiError.badRequest('INVALID_CHARACTER', `${field} contains a NUL character (U+0000), which cannot be stored`, [{ field, message: 'contains U+0000' }]);
}

function loneSurrogate(field: string): ApiError {
  return ApiError.badRequest('INVALID_CHARACTER', `${field} is not well-formed Unicode (a lone UTF-16 surrogate, U+D800..U+DFFF), which cannot be stored`, [
    { field, message: 'contains a lone surrogate' },
  ]);
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `x-request-id` when it is sane, else a new one. */
export function readRequestId(headers: Headers, fresh: () => string): string {
  const incoming = headers.get('x-request-id');
  return incoming && REQUEST_ID.test(incoming) ? incoming : fresh();
}

/**
 * Past the limit, how much more of a body is read and dropped before the 413: a client that sends a body a little
 * too large gets its answer once it has sent it all, on a connection that stays usable. Beyond this the 413 goes out
 * at once.
 */
const DRAIN_LIMIT_BYTES = 4 * MAX_BODY_BYTES;

/**
 * The body as sent, read from the socket until its end. Past the limit nothing more is kept: the rest is read and
 * dropped up to its end, and then 413 is thrown; or, beyond DRAIN_LIMIT_BYTES (a declared length beyond it at once),
 * the 413 goes out without waiting for the end while the rest is still read and dropped (node:http does so for a
 * body left unread), until the client stops sending or the server's request timeout ends it. Either way no more than
 * the limit is ever held in memory.
 */
function readNodeBody(req: IncomingMessage): Promise<string> {
  if (!req.headers['content-length'] && !req.headers['transfer-encoding']) return Promise.resolve('');
  if (Number(req.headers['content-length'] ?? 0) > DRAIN_LIMIT_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      else if (size > DRAIN_LIMIT_BYTES) reject(tooLarge());
    });
    req.on('end', () => (size > MAX_BODY_BYTES ? reject(tooLarge()) : resolve(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
  });
}

/** 413: the body is larger than MAX_BODY_BYTES. */
function tooLarge(): ApiError {
  return new ApiError(413, 'BODY_TOO_LARGE', `The request body exceeds ${MAX_BODY_BYTES} bytes`);
}
