import { DeadlockException, OptimisticLockError, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from './clock.ts';
import { auditAndOutboxStatement } from '../persistence/outbox.ts';
import { applyTransition, type Applied, type CommandActor, type CommandScope, type EntityKind, type PendingRecords, type TransitionRequest } from './commands/apply-transition.ts';
import { applyCascades } from './commands/cascade-rules.ts';
import { DomainError } from './domain-error.ts';
import { ActorRegistry } from './runtime/actor-registry.ts';
import { AnswerAtCommit } from './runtime/answer-at-commit.ts';
import { inCommandTransaction, StalePlanError, type CommitRead } from './runtime/command-transaction.ts';
import { GroupCommit } from './runtime/group-commit.ts';
import { Mailbox } from './runtime/mailbox.ts';
import { workflowsOutsideTransaction } from './workflow/workflow.service.ts';

export type EngineDeps = {
  orm: MikroORM;
  clock: Clock;
  maxActors?: number;
  idleMs?: number;
  /** Group commit of transitions: most per transaction (default 32), transactions in flight (default 2, see GroupCommitOptions). */
  groupCommit?: { maxBatch?: number; maxConcurrent?: number };
};

export type CommandContext = { siteId: string; actor: CommandActor };

/** The one way in for state changes, shared by REST, sockets, timers and the simulator (DESIGN §3). */
export type Engine = {
  /**
   * Moves an entity: one at a time per entity (mailbox); the move, its cascades, audit and outbox in a transaction
   * shared with the other moves that arrived meanwhile (group commit: their statements pipelined, a failed move
   * writing nothing), answered once that transaction committed; on a race (version or unique key) the cached actor
   * is dropped and the command retried once, then 409.
   */
  transition(ctx: CommandContext, kind: EntityKind, id: string, request: TransitionRequest, notes?: { cancellationNotes?: string }): Promise<Applied>;
  /**
   * Runs other work that writes actors (create, edit, bulk) in the command discipline: the entity's mailbox, one
   * transaction, cached actors refreshed after commit. Work that answers with a read of what it wrote returns an
   * {@link AnswerAtCommit}: the read goes out with the COMMIT, and the command answers with what it builds from it.
   */
  command<T>(ctx: CommandContext, key: string, work: (scope: CommandScope) => Promise<T | AnswerAtCommit<T>>): Promise<T>;
  /** Called after every commit that wrote outbox rows (the relay's kick). */
  onCommit(listener: () => void): void;
  readonly registry: ActorRegistry;
  /** Evicts idle actors now (also runs on a timer once started). */
  sweep(): number;
  start(): void;
  stop(): void;
};

/**
 * A raced attempt (a concurrent writer won, or PostgreSQL chose this transaction as a deadlock's victim: a stop move
 * locks its stop then its job, a job cancel its job then its stops): the transaction or savepoint rolled back, so
 * running it again on fresh reads is safe.
 */
const raced = (error: unknown) =>
  error instanceof OptimisticLockError || error instanceof UniqueConstraintViolationException || error instanceof DeadlockException;
const conflict = () => DomainError.conflict('VERSION_CONFLICT', 'The record changed while this command ran; reload it and try again');

export function createEngine(deps: EngineDeps): Engine {
  const registry = new ActorRegistry({ maxActors: deps.maxActors ?? 100_000, idleMs: deps.idleMs ?? 10 * 60_000 });
  const mailbox = new Mailbox();
  const listeners: (() => void)[] = [];
  let timer: NodeJS.Timeout | undefined;
  const notifyCommitted = () => {
    for (const listener of listeners) listener();
  };
  const remember = (siteId: string, touched: CommandScope['touched']) => {
    for (const [id, entry] of touched) registry.set(siteId, id, { ...entry, lastUsedAt: deps.clock.now().getTime() });
  };
  // Transitions share transactions; their audit records and outbox rows are written once per batch, in order.
  const transitions = new GroupCommit<{ applied: Applied; pending: PendingRecords }>({
    orm: deps.orm,
    ...deps.groupCommit,
    commitStatement: (values) =>
      auditAndOutboxStatement(
        values.flatMap((v) => v.pending.audits),
        values.flatMap((v) => v.pending.events),
      ),
    afterCommit: notifyCommitted,
  });

  async function transition(ctx: CommandContext, kind: EntityKind, id: string, request: TransitionRequest, notes: { cancellationNotes?: string }): Promise<Applied> {
    return mailbox.run(`${kind}:${id}`, async () => {
      for (let attempt = 1; ; attempt += 1) {
        const touched: CommandScope['touched'] = new Map();
        try {
          const outcome = await transitions.run({
            siteId: ctx.siteId,
            userId: ctx.actor.userId,
            work: async (em) => {
              touched.clear(); // a batch that could not commit runs its units again
              const scope: CommandScope = { em, siteId: ctx.siteId, actor: ctx.actor, clock: deps.clock, registry, touched, pending: { audits: [], events: [] } };
              const applied = await applyTransition(scope, kind, id, request, notes);
              await applyCascades(scope, applied, notes);
              return { applied, pending: scope.pending };
            },
            committed: () => remember(ctx.siteId, touched),
          });
          return outcome.applied;
        } catch (error) {
          if (!raced(error)) throw error;
          for (const touchedId of touched.keys()) registry.drop(ctx.siteId, touchedId);
          if (attempt >= 2 && error instanceof OptimisticLockError) throw conflict();
          if (attempt >= 2) throw error;
        }
      }
    });
  }

  async function command<T>(ctx: CommandContext, key: string, work: (scope: CommandScope) => Promise<T | AnswerAtCommit<T>>): Promise<T> {
    return mailbox.run(key, async () => {
      const { value, read } = await commandUntilCommitted(ctx, work);
      // Built once committed and outside the attempts: an error here must not run a committed command again.
      return value instanceof AnswerAtCommit ? value.build(read!.rows!, workflowsOutsideTransaction(deps.orm, ctx.siteId)) : value;
    });
  }

  /** Runs a command's work in its own transaction until it commits: a race runs it again on fresh reads, once. */
  async function commandUntilCommitted<T>(ctx: CommandContext, work: (scope: CommandScope) => Promise<T>): Promise<{ value: T; read: CommitRead | null }> {
    // A plan made from memory that no longer held costs one run on reads, not one of the command's attempts.
    let staleRetry = true;
    for (let attempt = 1; ; attempt += 1) {
      const touched: CommandScope['touched'] = new Map();
      const committed: (() => void)[] = [];
      let read: CommitRead | null = null;
      try {
        const value = await inCommandTransaction(deps.orm, { siteId: ctx.siteId, userId: ctx.actor.userId }, async (em: EntityManager) => {
          const planAhead = { afterCommit: (callback: () => void) => committed.push(callback) };
          const scope: CommandScope = { em, siteId: ctx.siteId, actor: ctx.actor, clock: deps.clock, registry, touched, pending: { audits: [], events: [] }, planAhead };
          const done = await work(scope);
          read = done instanceof AnswerAtCommit ? { sql: done.sql, params: done.params } : null;
          // The transitions' audit records and outbox rows, after every row they describe (one statement, sent with the COMMIT).
          return { value: done, last: auditAndOutboxStatement(scope.pending.audits, scope.pending.events), read };
        });
        remember(ctx.siteId, touched);
        for (const callback of committed) callback();
        notifyCommitted();
        return { value, read };
      } catch (error) {
        if (!raced(error)) throw error;
        for (const id of touched.keys()) registry.drop(ctx.siteId, id);
        if (error instanceof StalePlanError && staleRetry) {
          staleRetry = false;
          attempt -= 1;
          continue;
        }
        if (attempt >= 2 && error instanceof OptimisticLockError) throw conflict();
        if (attempt >= 2) throw error;
      }
    }
  }

  return {
    registry,
    command,
    transition: (ctx, kind, id, request, notes = {}) => transition(ctx, kind, id, request, notes),
    onCommit: (listener) => listeners.push(listener),
    sweep: () => registry.sweep(deps.clock.now().getTime()),
    start() {
      timer = setInterval(() => registry.sweep(deps.clock.now().getTime()), 60_000);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}
