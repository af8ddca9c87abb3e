import type { Static } from 'typebox';
import { DomainError } from '../engine/domain-error.ts';
import type { ErrorBody } from './schemas/common.schema.ts';

/** One failing input field: its JSON path (`/stops/0/type`, or a query parameter name) and what is wrong. */
export type FieldError = { field: string; message: string };

/**
 * The one error type of the API: an HTTP status, an UPPER_SNAKE code and a message, rendered as
 * `{error, message, code, description?, fields?, details?}`. Create them with the named factories below.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { description?: string; fields?: FieldError[]; headers?: Record<string, string>; data?: Record<string, unknown> } = {},
  ) {
    super(message);
  }

  toBody(): Static<typeof ErrorBody> {
    return {
      error: this.message,
      // The spec's error object names the text `message`; `error` stays for the clients that read it.
      message: this.message,
      code: this.code,
      ...(this.details.description ? { description: this.details.description } : {}),
      ...(this.details.fields ? { fields: this.details.fields } : {}),
      ...(this.details.data ? { details: this.details.data } : {}),
    };
  }

  static badRequest(code: string, message: string, fields?: FieldError[]): ApiError {
    return new ApiError(400, code, message, fields ? { fields } : {});
  }

  static validation(fields: FieldError[]): ApiError {
    const names = fields.map((f) => f.field).join(', ');
    return new ApiError(400, 'VALIDATION_FAILED', `Invalid input: ${names}`, {
      description: fields.map((f) => `${f.field}: ${f.message}`).join('; '),
      fields,
    });
  }

  static unauthorized(code: string, message: string): ApiError {
    return new ApiError(401, code, message);
  }

  static forbidden(permission: string, role: string): ApiError {
    return new ApiError(403, 'FORBIDDEN', `The ${role} role lacks the permission ${permission}`);
  }

  static notFound(entity: string, id?: string): ApiError {
    return new ApiError(404, 'NOT_FOUND', id ? `${entity} ${id} not found` : `${entity} not found`);
  }

  static conflict(code: string, message: string): ApiError {
    return new ApiError(409, code, message);
  }

  static unprocessable(code: string, message: string): ApiError {
    return new ApiError(422, code, message);
  }

  static rateLimited(retryAfterSeconds: number, headers: Record<string, string>): ApiError {
    return new ApiError(429, 'RATE_LIMITED', `Rate limit exceeded; retry in ${retryAfterSeconds} s`, {
      headers: { ...headers, 'retry-after': String(retryAfterSeconds) },
    });
  }
}

/** Maps anything thrown to an ApiError; unknown errors become a 500 that reveals no internals. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof DomainError) {
    return new ApiError(error.status, error.code, error.message, {
      ...(error.fields ? { fields: error.fields } : error.field ? { fields: [{ field: error.field, message: error.message }] } : {}),
      ...(error.details ? { data: error.details } : {}),
    });
  }
  if (isUniqueViolation(error)) return ApiError.conflict('ALREADY_EXISTS', 'A record with the same unique value exists');
  return new ApiError(500, 'INTERNAL_ERROR', 'Internal server error');
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
