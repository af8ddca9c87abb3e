import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inCommandTransaction } from '../../../engine/runtime/command-transaction.ts';
import { createSiteFixture, type SiteFixture } from '../../support/fixtures.ts';
import { startTestServer, type TestServer } from '../../support/test-server.ts';

// Review of c847e77/1e35c28: holes in "a stale EntityManager is refused" and in nested-savepoint semantics.
let server: TestServer;
let acme: SiteFixture;

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
});
afterAll(() => server.close());

const inCommand = <T>(work: (em: EntityManager) => Promise<T>) =>
  inCommandTransaction<T>(server.services.db.orm, { siteId: acme.site.id, userId: acme.users.dispatcher.id }, async (em) => ({ value: await work(em), last: null }));

const ENDED = /transaction has ended|already complete/;

const backendAndXid = (em: EntityManager) =>
  em.execute<{ pid: number; xid: string }[]>(em.getKnex().raw('select pg_backend_pid() as pid, txid_current()::text as xid')).then((rows) => rows[0]!);

describe('review: a stale command EntityManager', () => {
  it("refuses a nested em.transactional once its transaction has ended, instead of running it in the next holder's transaction", async () => {
    let kept: EntityManager | undefined;
    const first = await inCommand(async (em) => {
      kept = em;
      return backendAndXid(em);
    });
    const other = await inCommand(async (em) => {
      const own = await backendAndXid(em);
      if (own.pid !== first.pid) return { own, stale: 'other session (inconclusive)' as unknown };
      // The stale manager's savepoint and query are sent on this session, inside this command's transaction.
      const stale = await kept!.transactional((inner) => backendAndXid(inner)).then((seen) => seen, (error: Error) => error.message);
      return { own, stale };
    });
    expect(other.stale).not.toBe('other session (inconclusive)');
    // Refused like the flat query (knex's nested transaction checks its outer one); here it ran in the other's transaction.
    expect(other.stale).not.toEqual(other.own);
    expect(String(other.stale)).toMatch(ENDED);
  });

  it('refuses em.execute with a raw SQL string once its transaction has ended', async () => {
    let kept: EntityManager | undefined;
    await inCommand(async (em) => {
      kept = em;
      await em.execute('select 1');
    });
    // executeDirectly sends through prefix.run, which is not gated on the prefix's owner: it reaches the connection.
    await expect(kept!.execute('select 1 as one')).rejects.toThrow(ENDED);
  });
});

describe('review: nested transactions', () => {
  it('runs two concurrent em.transactional of one command one after the other (knex chains siblings on outerTx)', async () => {
    const result = await inCommand(async (em) => {
      const one = em.transactional(async (inner) => {
        await inner.execute(inner.getKnex().raw('select pg_sleep(0.05)'));
        return 1;
      });
      const two = em.transactional(async (inner) => {
        await inner.execute(inner.getKnex().raw('select 2'));
        return 2;
      });
      return Promise.all([one, two]);
    });
    expect(result).toEqual([1, 2]);
  });
});
