import type { EntityManager } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandContext } from '../../../engine/engine.ts';
import { AnswerAtCommit } from '../../../engine/runtime/answer-at-commit.ts';
import { newId } from '../../../persistence/ids.ts';
import { appendOutbox } from '../../../persistence/outbox.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { createSiteFixture, type SiteFixture } from '../../support/fixtures.ts';
import { startTestServer, type TestServer } from '../../support/test-server.ts';

/**
 * `engine.command` work that answers with an `AnswerAtCommit`: the read goes out with the COMMIT (one query fewer
 * than reading before it), sees the command's writes, and a read that fails rolls the whole command back.
 */
let server: TestServer;
let acme: SiteFixture;
let ctx: CommandContext;

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  ctx = { siteId: acme.site.id, actor: { userId: acme.users.dispatcher.id, applicationId: null, requestId: null, role: 'dispatcher' } };
});
afterAll(() => server.close());

/** An outbox row written through the ORM's unit of work and flushed; returns its entity id. */
async function probeEvent(em: EntityManager): Promise<string> {
  const entityId = newId('job');
  appendOutbox(em, { siteId: acme.site.id, event: 'probe:written', entityType: 'probe', entityId, entityVersion: null, data: {}, timestamp: new Date() });
  await em.flush();
  return entityId;
}

const COUNT = 'select count(*)::int as n from outbox where entity_id = ?';
const committedCount = async (entityId: string): Promise<number> =>
  (await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) => em.execute<{ n: number }[]>(COUNT, [entityId])))[0]!.n;

/** Runs `command` counting the queries sent to PostgreSQL meanwhile (any connection: nothing else runs here). */
async function counted<T>(command: () => Promise<T>): Promise<{ value: T; queries: number }> {
  const prototype = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = prototype.query;
  let queries = 0;
  prototype.query = function (this: unknown, ...args: unknown[]) {
    queries += 1;
    return query.apply(this, args);
  };
  try {
    return { value: await command(), queries };
  } finally {
    prototype.query = query;
  }
}

describe('a command answered by a read sent with its COMMIT', () => {
  it("answers from the command's own writes, committed, in one query fewer than a read of its own", async () => {
    const before = await counted(() =>
      server.services.engine.command(ctx, 'probe:before', async (scope) => {
        const id = await probeEvent(scope.em);
        return { id, n: (await scope.em.execute<{ n: number }[]>(COUNT, [id]))[0]!.n };
      }),
    );
    const atCommit = await counted(() =>
      server.services.engine.command(ctx, 'probe:at-commit', async (scope) => {
        const id = await probeEvent(scope.em);
        return new AnswerAtCommit(COUNT, [id], async (rows) => ({ id, n: Number(rows[0]!.n) }));
      }),
    );
    expect(before.value.n).toBe(1);
    expect(atCommit.value.n).toBe(1);
    expect(await committedCount(atCommit.value.id)).toBe(1);
    expect(atCommit.queries).toBe(before.queries - 1);
  });

  it('rolls the command back when its read fails, and its session goes back to the pool out of any transaction', async () => {
    let id = '';
    let backend = 0;
    await expect(
      server.services.engine.command(ctx, 'probe:failing', async (scope) => {
        id = await probeEvent(scope.em);
        backend = (await scope.em.execute<{ pid: number }[]>('select pg_backend_pid() as pid'))[0]!.pid;
        return new AnswerAtCommit('select 1 / (count(*)::int - 1) as n from outbox where entity_id = ?', [id], async (rows) => rows[0]!.n);
      }),
    ).rejects.toThrow(/division by zero/);
    expect(await committedCount(id)).toBe(0);
    const observer = new Client({ connectionString: server.databaseUrl });
    await observer.connect();
    try {
      const { rows } = await observer.query<{ state: string }>('select state from pg_stat_activity where pid = $1', [backend]);
      expect(rows[0]!.state).toBe('idle');
    } finally {
      await observer.end();
    }
  });

  it('maps the answer once committed', async () => {
    const answer = await server.services.engine.command(ctx, 'probe:map', async (scope) => {
      const id = await probeEvent(scope.em);
      return new AnswerAtCommit(COUNT, [id], async (rows) => Number(rows[0]!.n)).map((n) => `${n} written`);
    });
    expect(answer).toBe('1 written');
  });
});
