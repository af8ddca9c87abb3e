import { Client } from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deferWrite, sendWithNext } from '../../../engine/runtime/deferred-writes.ts';
import { GroupCommit, type Unit } from '../../../engine/runtime/group-commit.ts';
import { createSiteFixture, type SiteFixture } from '../../support/fixtures.ts';
import { startTestServer, type TestServer } from '../../support/test-server.ts';

let server: TestServer;
let acme: SiteFixture;

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  // A scratch table without row-level security: what the units write, read back from outside their transaction.
  await server.services.db.orm.em.getConnection().execute('create table pipeline_probe (id text primary key, value int not null)');
});
afterAll(() => server.close());
beforeEach(async () => {
  await server.services.db.orm.em.getConnection().execute(`delete from pipeline_probe; insert into pipeline_probe values ('a', 0), ('b', 0), ('c', 0)`);
});

const values = async (): Promise<Record<string, number>> => {
  const rows = await server.services.db.orm.em.getConnection().execute<{ id: string; value: number }[]>('select id, value from pipeline_probe order by id');
  return Object.fromEntries(rows.map((r) => [r.id, r.value]));
};

/** Units submitted in the same tick, so they share one batch (one batch at a time). */
function oneBatch<T>(units: Omit<Unit<T>, 'siteId'>[]): Promise<PromiseSettledResult<T>[]> {
  const groupCommit = new GroupCommit<T>({ orm: server.services.db.orm, maxConcurrent: 1 });
  return Promise.allSettled(units.map((unit) => groupCommit.run({ siteId: acme.site.id, ...unit })));
}

/**
 * The queries `work`'s batch sends to PostgreSQL (PREPARE and DEALLOCATE, sent between batches, not counted): those
 * of the sessions that set one of the site's users, so the test server's background work (the outbox relay, the
 * schedulers), which runs on other sessions at the same time, is not counted with them.
 */
async function queriesDuring<T>(work: () => Promise<T>): Promise<{ result: T; queries: number }> {
  const prototype = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const userIds = Object.values(acme.users).map((user) => user.id);
  const sessions = new Map<unknown, { queries: number; ours: boolean }>();
  prototype.query = function (this: unknown, ...args: unknown[]) {
    const config = args[0] as string | { text?: string };
    const text = typeof config === 'string' ? config : (config.text ?? '');
    const session = sessions.get(this) ?? { queries: 0, ours: false };
    sessions.set(this, session);
    if (!/^(prepare|deallocate) /.test(text)) session.queries += 1;
    if (userIds.some((id) => text.includes(id))) session.ours = true;
    return original.apply(this, args);
  };
  try {
    const result = await work();
    const queries = [...sessions.values()].filter((session) => session.ours).reduce((sum, session) => sum + session.queries, 0);
    return { result, queries };
  } finally {
    prototype.query = original;
  }
}

const bump = (id: string) => async (em: Parameters<Unit<unknown>['work']>[0]) => {
  const [row] = await em.execute<{ value: number }[]>('update pipeline_probe set value = value + 1 where id = ? returning value', [id]);
  return row!.value;
};

  /** A unit that reads its own user and transaction, then bumps row `a`. */
const readThenBump = (userId: string) => ({
    userId,
    work: async (em: Parameters<Unit<unknown>['work']>[0]) => {
      const [seen] = await em.execute<{ user_id: string; tx: string }[]>(`select current_setting('app.user_id', true) as user_id, txid_current()::text as tx`);
      const [row] = await em.execute<{ value: number }[]>(`update pipeline_probe set value = value + 1 where id = 'a' returning value`);
      return { ...seen!, value: row!.value };
    },
  });

describe('pipelined group commit (a batch’s units at the same time, their statements in shared round trips)', () => {
  it('runs each statement as its own unit’s user, in one transaction, one round trip per round of statements', async () => {
    const users = [acme.users.dispatcher.id, acme.users.driver.id, acme.users.dispatcher.id];
    const { result, queries } = await queriesDuring(() => oneBatch(users.map(readThenBump)));
    const answers = result.map((r) => (r.status === 'fulfilled' ? r.value : r.reason));
    expect(answers.map((a) => a.user_id)).toEqual(users);
    expect(new Set(answers.map((a) => a.tx)).size).toBe(1);
    // Each unit saw the writes of the statements before its own.
    expect(answers.map((a) => a.value)).toEqual([1, 2, 3]);
    // Two rounds (the reads, then the updates) and the COMMIT: not one round trip per statement.
    expect(queries).toBe(3);
    expect(await values()).toMatchObject({ a: 3 });
  });

  it('answers a unit that failed after writing with its error, writes nothing of it, and commits the others', async () => {
    const [failed, ok] = await oneBatch<number>([
      {
        userId: acme.users.dispatcher.id,
        work: async (em) => {
          await bump('a')(em);
          throw new Error('refused after its write');
        },
      },
      { userId: acme.users.dispatcher.id, work: bump('b') },
    ]);
    expect(failed).toMatchObject({ status: 'rejected', reason: { message: 'refused after its write' } });
    expect(ok).toEqual({ status: 'fulfilled', value: 1 });
    expect(await values()).toEqual({ a: 0, b: 1, c: 0 });
  });

  it('reports a failing statement to its own unit only', async () => {
    const [first, failing, last] = await oneBatch<number>([
      { userId: acme.users.dispatcher.id, work: bump('a') },
      { userId: acme.users.driver.id, work: async (em) => (await em.execute<{ n: number }[]>('select 1 / 0 as n'))[0]!.n },
      { userId: acme.users.dispatcher.id, work: bump('c') },
    ]);
    expect(first).toEqual({ status: 'fulfilled', value: 1 });
    expect(failing).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('division by zero') } });
    expect(last).toEqual({ status: 'fulfilled', value: 1 });
    expect(await values()).toEqual({ a: 1, b: 0, c: 1 });
  });

  it('keeps a batch pipelined when a unit fails having only read', async () => {
    const { result, queries } = await queriesDuring(() =>
      oneBatch<number>([
        {
          userId: acme.users.dispatcher.id,
          work: async (em) => {
            await em.execute('select value from pipeline_probe where id = ?', ['a']);
            throw new Error('not found');
          },
        },
        { userId: acme.users.dispatcher.id, work: bump('b') },
      ]),
    );
    expect(result[0]).toMatchObject({ status: 'rejected', reason: { message: 'not found' } });
    expect(result[1]).toEqual({ status: 'fulfilled', value: 1 });
    // One round and the COMMIT: nothing ran again in savepoints.
    expect(queries).toBe(2);
  });

  it('sends a unit’s deferred writes with its next statement, or with the COMMIT, as its own user; a failed unit’s unsent ones are dropped', async () => {
    const { driver, dispatcher } = acme.users;
    // Row c ends up 1 only if the write ran as the driver (row-level security reads that setting).
    const asDriver = `update pipeline_probe set value = value + (current_setting('app.user_id', true) = ?)::int where id = ?`;
    const { result, queries } = await queriesDuring(() =>
      oneBatch<number>([
        {
          userId: dispatcher.id,
          work: async (em) => {
            expect(deferWrite(em, 'update pipeline_probe set value = value + 10 where id = ?', ['a'])).toBe(true);
            // Sees its own deferred write: it went just before this read, in the same round.
            return (await em.execute<{ value: number }[]>('select value from pipeline_probe where id = ?', ['a']))[0]!.value;
          },
        },
        { userId: driver.id, work: async (em) => (deferWrite(em, asDriver, [driver.id, 'c']), 0) },
        {
          userId: dispatcher.id,
          work: async (em) => {
            deferWrite(em, 'update pipeline_probe set value = value + 100 where id = ?', ['b']);
            throw new Error('refused before sending anything');
          },
        },
      ]),
    );
    expect(result.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(result[0]).toEqual({ status: 'fulfilled', value: 10 });
    // One round (the read with its deferred write) and the COMMIT with the other unit's write.
    expect(queries).toBe(2);
    expect(await values()).toEqual({ a: 10, b: 0, c: 1 });
  });

  it('runs a statement prepared on a session that sent it before, and recovers when its plan no longer fits the table', async () => {
    type Read = { backend: number; prepared: boolean; columns: string[] };
    type Seen = Read & { queries: number };
    const readRow: Omit<Unit<Read>, 'siteId'> = {
      userId: acme.users.dispatcher.id,
      work: async (em) => {
        const [session] = await em.execute<{ backend: number; prepared: boolean }[]>(
          `select pg_backend_pid() as backend, exists (select 1 from pg_prepared_statements where statement like '%from pipeline_probe where id = $1') as prepared`,
        );
        const [row] = await em.execute<Record<string, unknown>[]>('select * from pipeline_probe where id = ?', ['a']);
        return { ...session!, columns: Object.keys(row!) };
      },
    };
    const runs = async (count: number): Promise<Seen[]> => {
      const seen: Seen[] = [];
      for (let i = 0; i < count; i += 1) {
        const { result, queries } = await queriesDuring(() => oneBatch([readRow]));
        const [outcome] = result;
        if (outcome!.status === 'rejected') throw outcome!.reason;
        seen.push({ ...outcome!.value, queries });
      }
      return seen;
    };
    const before = await runs(12);
    // A session that already ran the statement in an earlier batch has it prepared.
    const repeated = before.filter((s, i) => before.slice(0, i).some((earlier) => earlier.backend === s.backend));
    expect(repeated.length).toBeGreaterThan(0);
    expect(repeated.every((s) => s.prepared)).toBe(true);
    // `select *` planned before a column was added cannot run any more ("cached plan must not change result type").
    await server.services.db.orm.em.getConnection().execute('alter table pipeline_probe add column note text');
    const after = await runs(16);
    expect(after.every((s) => s.columns.includes('note'))).toBe(true);
    // A session's first run after the change fails over (and drops its statements), its second prepares the
    // statement again, and from its third on the batch runs prepared and pipelined: two rounds and the COMMIT.
    const third = after.filter((s, i) => after.slice(0, i).filter((earlier) => earlier.backend === s.backend).length >= 2);
    expect(third.length).toBeGreaterThan(0);
    expect(third.every((s) => s.prepared && s.queries === 3)).toBe(true);
  });

  it('sends a deferred write that does not check itself when its unit finishes, before the writes of units that finish later', async () => {
    const [first, second] = await oneBatch<number>([
      // Finishes at once, its write still queued: it goes out now, not with the COMMIT after the other unit's.
      { userId: acme.users.admin.id, work: async (em) => (await sendWithNext(em, 'update pipeline_probe set value = 5 where id = ?', ['a']), 1) },
      {
        userId: acme.users.admin.id,
        work: async (em) => {
          await em.execute('select 1');
          await em.execute('select 1');
          await em.execute('update pipeline_probe set value = 7 where id = ?', ['a']);
          return 2;
        },
      },
    ]);
    expect([first!.status, second!.status]).toEqual(['fulfilled', 'fulfilled']);
    expect((await values()).a).toBe(7);
  });

  it('writes the batch statement (audit and outbox) in the order the units wrote, not the order they arrived', async () => {
    let written: number[] = [];
    const groupCommit = new GroupCommit<number>({ orm: server.services.db.orm, maxConcurrent: 1, commitStatement: (batchValues) => ((written = batchValues), null) });
    // The first to arrive reads before it writes, so the second one's update of the same row goes first.
    const first = groupCommit.run({ siteId: acme.site.id, userId: acme.users.admin.id, work: async (em) => (await em.execute('select 1'), bump('a')(em)) });
    const second = groupCommit.run({ siteId: acme.site.id, userId: acme.users.admin.id, work: bump('a') });
    expect(await Promise.all([first, second])).toEqual([2, 1]);
    expect(written).toEqual([1, 2]);
  });
});
