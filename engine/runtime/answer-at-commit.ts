import type { Workflow } from '../../machines/workflow.schema.ts';

/** A workflow version by id, for code that runs after a command's transaction ended (see `engine.command`). */
export type WorkflowLookup = (id: string) => Promise<Workflow>;

type Build<T> = (rows: Record<string, unknown>[], workflows: WorkflowLookup) => Promise<T>;

/**
 * A command's answer made from a read that goes out with its COMMIT (inside the transaction, after every write and
 * the audit and outbox rows) instead of in a round trip of its own before them: the command's `work` returns one,
 * and `engine.command` answers with what `build` makes of the read's rows once the transaction committed. `build`
 * runs after the transaction, so it reads nothing through the command's EntityManager: workflows come through the
 * lookup it is given.
 */
export class AnswerAtCommit<T> {
  constructor(
    readonly sql: string,
    readonly params: unknown[],
    readonly build: Build<T>,
  ) {}

  /** The same read, its answer passed through `change` (after the commit too). */
  map<U>(change: (answer: T, workflows: WorkflowLookup) => U | Promise<U>): AnswerAtCommit<U> {
    return new AnswerAtCommit(this.sql, this.params, async (rows, workflows) => change(await this.build(rows, workflows), workflows));
  }
}
