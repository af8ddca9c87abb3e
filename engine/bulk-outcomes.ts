import { DomainError } from './domain-error.ts';

export type BulkFailure = { id: string; error: string; code: string };
export type BulkResult<T> = { succeeded: T[]; failed: BulkFailure[] };

/** The code of an item that failed on the server's side (a database error, a lost connection, a bug). */
const ITEM_INTERNAL_ERROR = 'INTERNAL_ERROR';

export type EachIdOptions = {
  /** Items handled at once (each is its own command). */
  concurrency: number;
  /** Told of each item that failed on the server's side, for the log: the answer names only its code. */
  onInternalError(id: string, error: unknown): void;
};

/**
 * Runs one command per id (duplicates once) and reports each outcome, as the spec shapes bulk results: a refusal
 * (DomainError: unknown id, another site's, a move the workflow refuses) fails that id only, with its code. So does
 * a failure on the server's side once another id has succeeded: each id is its own transaction, and a 500 for the
 * whole call would hide which ones committed (a client retrying it would, say, duplicate jobs twice). When nothing
 * succeeded, the first such failure is thrown: nothing changed, and the call answers 500 as any other would.
 */
export async function eachId<T>(ids: readonly string[], run: (id: string) => Promise<T>, options: EachIdOptions): Promise<BulkResult<T>> {
  const unique = [...new Set(ids)];
  const outcomes: ({ ok: T } | { failure: BulkFailure })[] = [];
  const internal: unknown[] = [];
  let next = 0;
  async function worker(): Promise<void> {
    while (next < unique.length) {
      const index = next++;
      const id = unique[index]!;
      try {
        outcomes[index] = { ok: await run(id) };
      } catch (error) {
        if (error instanceof DomainError) {
          outcomes[index] = { failure: { id, error: error.message, code: error.code } };
          continue;
        }
        internal.push(error);
        options.onInternalError(id, error);
        outcomes[index] = { failure: { id, error: `Internal error while handling ${id}; the others are reported as they ended`, code: ITEM_INTERNAL_ERROR } };
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(options.concurrency, unique.length) }, worker));
  const succeeded = outcomes.flatMap((o) => ('ok' in o ? [o.ok] : []));
  if (succeeded.length === 0 && internal.length > 0) throw internal[0];
  return { succeeded, failed: outcomes.flatMap((o) => ('failure' in o ? [o.failure] : [])) };
}
