/** The bits of MikroORM's platform used here. */
export type InliningPlatform = { formatQuery(sql: string, params: readonly unknown[]): string; quoteValue(value: unknown): string };

/**
 * A string as a PostgreSQL literal, exactly as `pg`'s `escapeLiteral` (and so MikroORM's platform) writes it:
 * quotes and backslashes doubled, and ` E'...'` when there is a backslash. `escapeLiteral` builds its answer one
 * character at a time, which for the command path's JSON (snapshots, audit records, outbox payloads: kilobytes per
 * batch) was several percent of a command's CPU; this does the same with two scans and native replaces.
 */
export function stringLiteral(value: string): string {
  const backslash = value.includes('\\');
  let body = value.includes("'") ? value.replaceAll("'", "''") : value;
  if (backslash) body = body.replaceAll('\\', '\\\\');
  return backslash ? ` E'${body}'` : `'${body}'`;
}

/**
 * `sql` with `params` inlined, the same text as the platform's `formatQuery` (`?` a value, `??` an identifier,
 * `\?` a literal question mark), with strings quoted by {@link stringLiteral} and every other value by the
 * platform. Statements with identifiers or escaped marks go to the platform whole.
 */
export function inlineValues(platform: InliningPlatform, sql: string, params: readonly unknown[]): string {
  if (params.length === 0 || sql.includes('??') || sql.includes('\\?')) return platform.formatQuery(sql, params);
  let text = '';
  let from = 0;
  let next = 0;
  for (let at = sql.indexOf('?'); at !== -1; at = sql.indexOf('?', at + 1)) {
    text += sql.slice(from, at) + quoteParam(platform, params[next++]);
    from = at + 1;
  }
  return text + sql.slice(from);
}

/** One value as {@link inlineValues} writes it in place of its `?`. */
export const quoteParam = (platform: InliningPlatform, value: unknown): string => (typeof value === 'string' ? stringLiteral(value) : platform.quoteValue(value));

/**
 * `sql` with its `?` numbered (`$1`, `$2`...) for PREPARE, when each `?` stands for exactly one of `params` as
 * {@link inlineValues} would write it: no identifiers or escaped marks, one `?` per value, and values that the
 * platform writes as one literal (strings, numbers, booleans, dates, null, JSON objects; not arrays, which it expands
 * into lists, nor raw SQL). Null otherwise.
 */
export function numberedPlaceholders(sql: string, params: readonly unknown[]): string | null {
  if (sql.includes('??') || sql.includes('\\?') || !params.every(isOneLiteral)) return null;
  let text = '';
  let from = 0;
  let next = 0;
  for (let at = sql.indexOf('?'); at !== -1; at = sql.indexOf('?', at + 1)) {
    text += `${sql.slice(from, at)}$${++next}`;
    from = at + 1;
  }
  return next === params.length ? text + sql.slice(from) : null;
}

function isOneLiteral(value: unknown): boolean {
  if (value === null || value === undefined || value instanceof Date) return true;
  const type = typeof value;
  if (type === 'string' || type === 'number' || type === 'boolean' || type === 'bigint') return true;
  return type === 'object' && Object.getPrototypeOf(value) === Object.prototype && !('sql' in (value as object));
}
