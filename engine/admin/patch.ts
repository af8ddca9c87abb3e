/**
 * Applies a PATCH-style update with three states per field: a value sets it, an omitted (undefined) field stays,
 * `null` clears it. `fields` maps API names (snake_case) to entity properties.
 * @returns the API names that were present in the patch
 */
export function applyPatch<E extends object>(
  entity: E,
  patch: Record<string, unknown>,
  fields: Partial<Record<string, keyof E>>,
): string[] {
  const touched: string[] = [];
  for (const [apiName, property] of Object.entries(fields)) {
    const value = patch[apiName];
    if (value === undefined || property === undefined) continue;
    (entity as Record<keyof E, unknown>)[property] = value;
    touched.push(apiName);
  }
  return touched;
}

/** `%text%` for ILIKE with the caller's `%`, `_` and `\` taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replaceAll(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** An entity as audit data: snake_case keys, ISO timestamps. Secret fields are masked by the audit writer. */
export function auditSnapshot(entity: object): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entity)) {
    if (typeof value === 'function') continue;
    data[key.replaceAll(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = value instanceof Date ? value.toISOString() : value;
  }
  return data;
}
