import { Pool } from 'pg';
import type { EntityKind } from '../../engine/commands/apply-transition.ts';
import type { CommandContext, Engine } from '../../engine/engine.ts';

/** One measured operation for a lane of the closed loop (see command-load.ts). */
export type Operation = (lane: number) => Promise<void>;

/**
 * Moves entities back and forth between their initial state and the next (`dispatch`, then `return`), so they
 * never end and the loop can run for any duration. Each lane owns its own entities (index modulo lanes) and
 * moves them round robin, so no two commands ever race on one entity: the rate is the command path's, not the
 * retry path's. A job dispatch cascades to its stop (DESIGN §2), so a job command moves two entities; a stop
 * command moves one and cascades nothing (its job only follows a stop that starts or ends).
 * @throws on any refusal, or when a move lands anywhere but the expected state
 */
export function cycleEntities(engine: Engine, ctx: CommandContext, kind: EntityKind, ids: string[], lanes: number): Operation {
  if (ids.length < lanes) throw new Error(`${ids.length} ${kind}s cannot give ${lanes} lanes one each`);
  const owned = Array.from({ length: lanes }, (_, lane) => ids.filter((__, i) => i % lanes === lane));
  const cursor = Array.from({ length: lanes }, () => 0);
  const dispatched = new Set<string>();
  const initial = kind === 'job' ? 'created' : 'pending';
  return async (lane) => {
    const mine = owned[lane]!;
    const id = mine[cursor[lane]! % mine.length]!;
    cursor[lane]! += 1;
    const back = dispatched.has(id);
    const applied = await engine.transition(ctx, kind, id, { kind: 'phase', event: back ? 'return' : 'dispatch' });
    if ((applied.to.key === initial) !== back) throw new Error(`${kind} ${id} went ${applied.from.key} → ${applied.to.key} on ${back ? 'return' : 'dispatch'}`);
    if (back) dispatched.delete(id);
    else dispatched.add(id);
  };
}

export type RawInserter = { operation: Operation; close(): Promise<void> };

/**
 * The baseline: single-row INSERTs through a plain `pg` Pool of the application's size, as the same (non-superuser)
 * role into a scratch table of the same database: one round trip and one commit each, the least a durable write
 * costs. The row is about as wide as an outbox row's fixed part, with a small JSON payload.
 */
export async function createRawInserter(databaseUrl: string, poolSize: number): Promise<RawInserter> {
  const pool = new Pool({ connectionString: databaseUrl, max: poolSize });
  await pool.query(`create table if not exists bench_raw_insert (
    id bigserial primary key, lane int not null, payload jsonb not null, created_at timestamptz not null default now())`);
  let n = 0;
  return {
    operation: async (lane) => {
      await pool.query('insert into bench_raw_insert (lane, payload) values ($1, $2)', [lane, JSON.stringify({ n: n++, event: 'bench:insert' })]);
    },
    close: () => pool.end(),
  };
}
