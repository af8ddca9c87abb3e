/**
 * Merges queued statements that are only lists of settings calls (`select set_config(...), ...`,
 * `select pg_advisory_xact_lock(...)`) into one `select` when they follow each other: a dispatch statement is
 * surrounded by its plan settings, which met the transaction's tenant settings and the next statement's lock in the
 * same round trip as three or four one-row selects of their own. PostgreSQL evaluates a target list left to right,
 * so the calls run in the order they were queued, and nobody reads a queued statement's result.
 */
export function mergeBareSelects(statements: string[]): string[] {
  const merged: string[] = [];
  let previousBare = false;
  for (const statement of statements) {
    const bare = isBareCallList(statement);
    if (bare && previousBare) merged[merged.length - 1] += `, ${statement.slice(SELECT.length)}`;
    else merged.push(statement);
    previousBare = bare;
  }
  return merged;
}

const SELECT = 'select ';
const SETTINGS_CALL = /^select (set_config|pg_advisory_xact_lock)\(/;
/** Anything that would make a target list more than a list of calls, once string literals are blanked. */
const NOT_A_BARE_LIST = /\b(from|where|group|having|window|order|limit|offset|union|intersect|except|into|returning)\b|;/i;

function isBareCallList(statement: string): boolean {
  if (!SETTINGS_CALL.test(statement)) return false;
  const outsideLiterals = statement.replace(/'(?:[^']|'')*'/g, "''");
  return !NOT_A_BARE_LIST.test(outsideLiterals.slice(SELECT.length));
}
