import { OptimisticLockError, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { inTenantScope } from '../persistence/tenant-scope.ts';
import type { Clock } from './clock.ts';
import { applyTransition, writePendingRecords, type Applied, type CommandActor, type CommandScope, type EntityKind, type TransitionRequest } from './commands/apply-transition.ts';
import { applyCascades } from './commands/cascade-rules.ts';
import { DomainError } from './domain-error.ts';
import { ActorRegistry } from './runtime/actor-registry.ts';
import { Mailbox } from './runtime/mailbox.ts';

export type EngineDeps = { orm: MikroORM; clock: Clock; maxActors?: number; idleMs?: number };

export type CommandContext = { siteId: string; actor: CommandActor };

/** The one way in for state changes, shared by REST, sockets, timers and the simulator (DESIGN §3). */
export type Engine = {
  /**
   * Moves an entity: one at a time per entity (mailbox), one transaction for the move, its cascades, audit and
   * outbox; on a race (version or unique key) the cached actor is dropped and the command retried once, then 409.
   */
  transition(ctx: CommandContext, kind: EntityKind, id: string, request: TransitionRequest, notes?: { cancellationNotes?: string }): Promise<Applied>;
  /**
   * Runs other work that writes actors (create, edit, bulk) in the command discipline: the entity's mailbox, one
   * transaction, cached actors refreshed after commit.
   */
  command<T>(ctx: CommandContext, key: string, work: (scope: CommandScope) => Promise<T>): Promise<T>;
  /** Called after every commit that wrote outbox rows (the relay's kick). */
  onCommit(listener: () => void): void;
  readonly registry: ActorRegistry;
  /** Evicts idle actors now (also runs on a timer once started). */
  sweep(): number;
  start(): void;
  stop(): void;
};

export function createEngine(deps: EngineDeps): Engine {
  const registry = new ActorRegistry({ maxActors: deps.maxActors ?? 100_000, idleMs: deps.idleMs ?? 10 * 60_000 });
  const mailbox = new Mailbox();
  const listeners: (() => void)[] = [];
  let timer: NodeJS.Timeout | undefined;

  async function command<T>(ctx: CommandContext, key: string, work: (scope: CommandScope) => Promise<T>): Promise<T> {
    return mailbox.run(key, async () => {
      for (let attempt = 1; ; attempt += 1) {
        const touched: CommandScope['touched'] = new Map();
        try {
          const result = await inTenantScope(deps.orm, { siteId: ctx.siteId, userId: ctx.actor.userId }, async (em: EntityManager) => {
            const scope: CommandScope = { em, siteId: ctx.siteId, actor: ctx.actor, clock: deps.clock, registry, touched, pending: { audits: [], events: [] } };
            const value = await work(scope);
            // The transitions' audit records and outbox rows, after every row they describe (one statement).
            await writePendingRecords(scope);
            return value;
          });
          for (const [id, entry] of touched) registry.set(ctx.siteId, id, { ...entry, lastUsedAt: deps.clock.now().getTime() });
          for (const listener of listeners) listener();
          return result;
        } catch (error) {
          // A concurrent writer won the race (a newer version, or the same new customer inserted first): the
          // transaction rolled back whole, so running the command again on fresh reads is safe.
          const raced = error instanceof OptimisticLockError || error instanceof UniqueConstraintViolationException;
          if (!raced) throw error;
          for (const id of touched.keys()) registry.drop(ctx.siteId, id);
          if (attempt >= 2 && error instanceof OptimisticLockError) {
            throw DomainError.conflict('VERSION_CONFLICT', 'The record changed while this command ran; reload it and try again');
          }
          if (attempt >= 2) throw error;
        }
      }
    });
  }

  return {
    registry,
    command,
    transition: (ctx, kind, id, request, notes = {}) =>
      command(ctx, `${kind}:${id}`, async (scope) => {
        const applied = await applyTransition(scope, kind, id, request, notes);
        await applyCascades(scope, applied, notes);
        return applied;
      }),
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
