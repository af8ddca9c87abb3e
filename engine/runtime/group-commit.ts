import type { MikroORM } from '@mikro-orm/postgresql';
import { runInSavepoint, type Member, type Outcome, type Unit } from './batch-units.ts';
import { inBatchTransaction } from './batch-transaction.ts';
import { asDriverException, platformOf } from './direct-execute.ts';
import { runPipelined } from './pipelined-units.ts';
import type { PreparedStatements } from './prepared-statements.ts';
import type { StatementPrefix } from './statement-prefix.ts';

export type { Unit } from './batch-units.ts';


export type GroupCommitOptions<T> = {
  orm: MikroORM;
  /** Most units per transaction. PostgreSQL caches 64 subtransactions per backend: stay well under. */
  maxBatch?: number;
  /**
   * Transactions in flight at once (each holds one pooled connection); the units waiting when slots free up are
   * spread over them (see `schedule`). Pipelined (the default): two. A pipelined batch costs about as many round
   * trips as its longest unit sends statements, whatever its size, so fewer and bigger batches cost less CPU per
   * command, on both sides, for the same throughput (16 commands in flight on 2 cores: 0.30–0.32 ms of Node and
   * 0.26–0.28 ms of PostgreSQL CPU per stop command with two, 0.33–0.36 and 0.30–0.35 with four). Not pipelined:
   * four, since there a batch's length in round trips grows with its size.
   */
  maxConcurrent?: number;
  /**
   * The statement (`?` placeholders, values) written once per batch with the values of the units that succeeded (in
   * order), sent in the same round trip as the COMMIT; null writes nothing.
   */
  commitStatement?: (values: T[]) => { sql: string; params: unknown[] } | null;
  /** Runs once after each batch committed. */
  afterCommit?: () => void;
  /**
   * Runs a batch's units at the same time with their statements pipelined (default true; see `runPipelined`), and
   * one after another in savepoints only when that cannot keep them apart. False: always one after another.
   */
  pipeline?: boolean;
};

/** Thrown inside a pipelined batch's transaction to roll it back. */
const PIPELINE_ABORTED = new Error('pipelined batch aborted');

/**
 * Group commit: units that arrive together (for one site) share one transaction and one COMMIT; a unit that fails
 * writes nothing and is answered with its error, while the others are answered only once the batch has committed
 * (an answered success is durable). Up to `maxConcurrent` batches run at once, each on its own connection. A batch
 * starts as soon as a slot is free and takes its share of the units of its site that waited meanwhile (all of them
 * when it is the only free slot), so under load batches grow and at rest a unit runs alone.
 *
 * A batch's units first run at the same time, their statements sent together in rounds (`runPipelined`); when that
 * cannot keep them apart, the transaction rolls back and they run again one after another, each in its own savepoint
 * (so a unit that fails rolls back alone). When that batch cannot commit either, no unit of it was written: each one
 * runs again alone, so one unit's failure at COMMIT (a deferred constraint) is reported to that unit only.
 */
export class GroupCommit<T> {
  private readonly queue: Member<T>[] = [];
  private running = 0;
  private scheduled = false;
  private readonly maxBatch: number;
  private readonly maxConcurrent: number;
  private readonly pipelined: boolean;

  constructor(private readonly options: GroupCommitOptions<T>) {
    this.pipelined = options.pipeline !== false;
    this.maxBatch = options.maxBatch ?? 32;
    this.maxConcurrent = options.maxConcurrent ?? (this.pipelined ? 2 : 4);
    // Zero would never start a batch (maxBatch 0 would start empty ones forever): every caller left unanswered.
    if (!(Number.isInteger(this.maxBatch) && this.maxBatch >= 1 && Number.isInteger(this.maxConcurrent) && this.maxConcurrent >= 1)) {
      throw new RangeError(`group commit needs maxBatch and maxConcurrent of at least 1 (got ${this.maxBatch} and ${this.maxConcurrent})`);
    }
  }

  /** Runs `unit` in the next batch of its site; resolves after that batch committed, rejects with the unit's own error. */
  run(unit: Unit<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ unit, resolve, reject });
      this.schedule();
    });
  }

  /** Units waiting for a batch. */
  get waiting(): number {
    return this.queue.length;
  }

  // Deferred to the next turn of the event loop, so units submitted by the same burst of I/O share a batch.
  private schedule(): void {
    if (this.scheduled || this.running >= this.maxConcurrent || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      // The waiting units are spread over the free slots, so that batches overlap: while PostgreSQL works on one,
      // Node works on the other's answers (pipelined, a batch as big as the whole load left one of the two idle at
      // any time, Node and PostgreSQL taking turns); not pipelined, their round trips overlap. A slot that frees
      // while the other batch runs takes every unit that waited, which keeps the two batches staggered. The share is
      // counted again for each slot: a site with fewer units waiting than its share leaves the rest to the next slot.
      while (this.running < this.maxConcurrent && this.queue.length > 0) {
        void this.start(this.take(Math.ceil(this.queue.length / (this.maxConcurrent - this.running))));
      }
    });
  }

  /** The oldest waiting unit and the next ones of its site, in arrival order, up to `size` (at most `maxBatch`). */
  private take(size: number): Member<T>[] {
    const siteId = this.queue[0]!.unit.siteId;
    const limit = Math.min(size, this.maxBatch);
    const batch: Member<T>[] = [];
    // One pass that keeps the others in order (a splice per taken unit made a long queue's take quadratic).
    let kept = 0;
    for (const member of this.queue) {
      if (batch.length < limit && member.unit.siteId === siteId) batch.push(member);
      else this.queue[kept++] = member;
    }
    this.queue.length = kept;
    return batch;
  }

  private async start(batch: Member<T>[]): Promise<void> {
    this.running += 1;
    try {
      await this.commit(batch);
    } finally {
      this.running -= 1;
      this.schedule();
    }
  }

  private async commit(batch: Member<T>[]): Promise<void> {
    if (this.pipelined && (await this.commitPipelined(batch))) return;
    await this.commitInSavepoints(batch);
  }

  /** The batch with its units at the same time; false when it rolled back (nothing written, nobody answered). */
  private async commitPipelined(batch: Member<T>[]): Promise<boolean> {
    let outcomes: Outcome<T>[] | null = null;
    try {
      await inBatchTransaction(this.options.orm, { siteId: batch[0]!.unit.siteId }, async (managers, prefix, prepared) => {
        outcomes = await runPipelined(batch, managers, prefix, prepared);
        if (!outcomes) throw PIPELINE_ABORTED;
        this.queueCommitStatement(outcomes, prefix, prepared);
      });
    } catch {
      // Aborted, or the COMMIT failed: the units run again in savepoints, which tell whose error it was.
      return false;
    }
    this.settle(outcomes!);
    return true;
  }

  private async commitInSavepoints(batch: Member<T>[]): Promise<void> {
    const outcomes: Outcome<T>[] = [];
    try {
      await inBatchTransaction(this.options.orm, { siteId: batch[0]!.unit.siteId }, async (managers, prefix, prepared) => {
        for (const member of batch) outcomes.push(await runInSavepoint(managers.of(member.unit.userId), prefix, member));
        this.queueCommitStatement(outcomes, prefix, prepared);
      });
    } catch (error) {
      // The transaction rolled back whole. A unit that failed on its own gets its own error; the others (written,
      // or not reached) run again, each alone, so the error reaches only the unit it belongs to.
      const failed = new Map(outcomes.flatMap((o) => (o.ok ? [] : [[o.member, o.error] as const])));
      for (const [member, own] of failed) member.reject(own);
      const others = batch.filter((member) => !failed.has(member));
      if (batch.length === 1) for (const member of others) member.reject(this.converted(error));
      else for (const member of others) await this.commitInSavepoints([member]);
      return;
    }
    this.settle(outcomes);
  }

  /** The statement written once per batch with the values of the units that succeeded, sent with the COMMIT (prepared once the session has sent it before). */
  private queueCommitStatement(outcomes: Outcome<T>[], prefix: StatementPrefix, prepared: PreparedStatements): void {
    const values = outcomes.flatMap((o) => (o.ok ? [o.value] : []));
    const statement = values.length > 0 ? this.options.commitStatement?.(values) : null;
    if (statement) prefix.add(prepared.textFor(platformOf(this.options.orm.em), statement.sql, statement.params).text);
  }

  /** After the COMMIT: `committed` callbacks in arrival order, `afterCommit`, then every caller answered. */
  private settle(outcomes: Outcome<T>[]): void {
    for (const o of outcomes) if (o.ok) o.member.unit.committed?.(o.value);
    this.options.afterCommit?.();
    for (const o of outcomes) {
      if (o.ok) o.member.resolve(o.value);
      else o.member.reject(o.error);
    }
  }

  /** A database error raised at COMMIT (the batch's statement travels with it) in the ORM's exception classes, as `em.execute` raises them. */
  private converted(error: unknown): unknown {
    return asDriverException(this.options.orm.em, error);
  }
}
