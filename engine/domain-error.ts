/**
 * A business-rule failure with an HTTP status and an UPPER_SNAKE code. The engine throws these; the HTTP layer
 * renders them as `{error, code}` without knowing the rule.
 */
export class DomainError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 422 | 502,
    readonly code: string,
    message: string,
    readonly field?: string,
    /** Machine-readable facts about the failure (e.g. the current state and the allowed moves). */
    readonly details?: Record<string, unknown>,
    /** Every field at fault with its own reason, when there are several (`field` is then the first). */
    readonly fields?: { field: string; message: string }[],
  ) {
    super(message);
  }

  static notFound(entity: string, id: string): DomainError {
    return new DomainError(404, 'NOT_FOUND', `${entity} ${id} not found`);
  }

  static conflict(code: string, message: string): DomainError {
    return new DomainError(409, code, message);
  }

  static invalid(code: string, message: string, field?: string): DomainError {
    return new DomainError(400, code, message, field);
  }

  /** 400 naming every field at fault, each with its reason; the message lists them all. */
  static invalidFields(code: string, summary: string, fields: { field: string; message: string }[]): DomainError {
    const reasons = fields.map((f) => `${f.field}: ${f.message}`).join('; ');
    return new DomainError(400, code, `${summary}: ${reasons}`, fields[0]?.field, undefined, fields);
  }

  static unprocessable(code: string, message: string): DomainError {
    return new DomainError(422, code, message);
  }
}
