import type { IndexedOperation, OperationIndex } from './openapi-index.ts';

export type OperationMatch = { method: string; path: string; summary: string; operationId: string | null; tags: string[] };

// How much a word counts depending on where it appears: the resource (path, operationId) says most about what an
// operation does, field names the least (many operations share `id`, `name`, `city`).
const WEIGHTS = { route: 3, summary: 2, tag: 2, method: 1.5, field: 1, description: 0.5 } as const;

// Agents phrase intents as verbs; the method is often the only place that verb appears.
const METHOD_WORDS: Record<string, string[]> = {
  GET: ['get', 'read', 'list', 'find', 'show', 'fetch'],
  POST: ['create', 'add', 'new', 'make', 'post'],
  PUT: ['update', 'edit', 'change', 'modify', 'put'],
  PATCH: ['update', 'edit', 'change', 'modify', 'patch'],
  DELETE: ['delete', 'remove', 'destroy'],
};

const STOP_WORDS = new Set(['a', 'an', 'the', 'of', 'to', 'for', 'by', 'in', 'on', 'and', 'or', 'with', 'my', 'all', 'api', 'me']);

/**
 * Ranks operations by how well their path, operationId, summary, tags and field names (body properties, query
 * parameters) match the words of `query`. A word matches exactly or as a prefix either way (`address` ~
 * `addresses`), the prefix counting for less. Operations matching nothing are left out; best first, at most `limit`.
 */
export function searchOperations(index: OperationIndex, query: string, limit: number): OperationMatch[] {
  const terms = wordsOf(query).filter((word) => !STOP_WORDS.has(word));
  if (terms.length === 0) return [];
  return index.operations
    .map((operation) => ({ operation, score: scoreOf(operation, terms) }))
    .filter((scored) => scored.score > 0)
    .sort((a, b) => b.score - a.score || a.operation.path.length - b.operation.path.length || a.operation.path.localeCompare(b.operation.path))
    .slice(0, limit)
    .map(({ operation }) => ({
      method: operation.method,
      path: operation.path,
      summary: operation.summary,
      operationId: operation.operationId,
      tags: operation.tags,
    }));
}

/** Lower-case words of a text, splitting camelCase, snake_case, dots and slashes; snake_case names also kept whole. */
export function wordsOf(text: string): string[] {
  const spaced = text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  const whole = spaced.match(/[a-z0-9_]+/g) ?? [];
  return [...new Set(whole.flatMap((word) => (word.includes('_') ? [word, ...word.split('_').filter(Boolean)] : [word])))];
}

function scoreOf(operation: IndexedOperation, terms: string[]): number {
  const fields: [words: string[], weight: number][] = [
    [[...wordsOf(operation.path.replace(/^\/api\b/, '')), ...wordsOf(operation.operationId ?? '')], WEIGHTS.route],
    [wordsOf(operation.summary), WEIGHTS.summary],
    [operation.tags.flatMap(wordsOf), WEIGHTS.tag],
    [METHOD_WORDS[operation.method] ?? [], WEIGHTS.method],
    [operation.fieldNames.flatMap(wordsOf), WEIGHTS.field],
    [wordsOf(operation.description), WEIGHTS.description],
  ];
  let total = 0;
  for (const term of terms) {
    total += Math.max(0, ...fields.map(([words, weight]) => weight * bestMatch(term, words)));
  }
  return total;
}

function bestMatch(term: string, words: string[]): number {
  let best = 0;
  for (const word of words) {
    if (word === term) return 1;
    const shorter = term.length < word.length ? term : word;
    const longer = shorter === term ? word : term;
    if (shorter.length >= 3 && longer.startsWith(shorter)) best = 0.6;
  }
  return best;
}
