import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';

let counter = 0;

/**
 * Runs one item of a batch (a job of a route or of a bulk distribution) inside a savepoint of the command's
 * transaction: a refusal (DomainError) undoes that item only, with the audit records, events and actor updates it
 * had collected, and is returned for the batch's `failed_jobs`. Any other error (a version race) fails the command,
 * which the engine retries whole.
 */
export async function inSavepoint<T>(scope: CommandScope, work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: DomainError }> {
  const name = `dispatch_item_${++counter}`;
  const audits = scope.pending.audits.length;
  const events = scope.pending.events.length;
  const touched = new Map(scope.touched);
  await scope.em.execute(`savepoint ${name}`);
  try {
    const value = await work();
    await scope.em.execute(`release savepoint ${name}`);
    return { ok: true, value };
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    await scope.em.execute(`rollback to savepoint ${name}`);
    scope.pending.audits.length = audits;
    scope.pending.events.length = events;
    scope.touched.clear();
    for (const [id, entry] of touched) scope.touched.set(id, entry);
    // Entities the ORM loaded inside the savepoint may no longer exist: forget them.
    scope.em.clear();
    return { ok: false, error };
  }
}
