import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inCommandTransaction } from '../../../engine/runtime/command-transaction.ts';
import { OutboxMessageSchema } from '../../../persistence/entities/outbox-message.entity.ts';
import { newId } from '../../../persistence/ids.ts';
import { appendOutbox } from '../../../persistence/outbox.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { createSiteFixture, type SiteFixture } from '../../support/fixtures.ts';
import { sessionState } from '../../support/session-state.ts';
import { startTestServer, type TestServer } from '../../support/test-server.ts';

let server: TestServer;
let acme: SiteFixture;

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
});
afterAll(() => server.close());

/** One command's transaction on the acme site, as its dispatcher. */
const inCommand = <T>(work: (em: EntityManager) => Promise<T>) =>
  inCommandTransaction<T>(server.services.db.orm, { siteId: acme.site.id, userId: acme.users.dispatcher.id }, async (em) => ({ value: await work(em), last: null }));

/** An outbox row written through the ORM's unit of work (a flush in the command's transaction); returns its entity id. */
function probeEvent(em: EntityManager): string {
  const entityId = newId('job');
  appendOutbox(em, { siteId: acme.site.id, event: 'probe:written', entityType: 'probe', entityId, entityVersion: null, data: {}, timestamp: new Date() });
  return entityId;
}

const written = async (entityId: string): Promise<boolean> => {
  const rows = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
    em.execute<{ n: number }[]>('select count(*)::int as n from outbox where entity_id = ?', [entityId]),
  );
  return rows[0]!.n === 1;
};

const backendOf = async (em: EntityManager): Promise<number> =>
  (await em.execute<{ pid: number }[]>(em.getKnex().raw('select pg_backend_pid() as pid, txid_current() as xid')))[0]!.pid;

describe('a pooled transaction (the command path, group commit and the relay)', () => {
  it("commits the ORM's flushes with the command, and a failed command leaves none of them and no open transaction", async () => {
    const committed = await inCommand(async (em) => {
      const id = probeEvent(em);
      await em.flush();
      return id;
    });
    expect(await written(committed)).toBe(true);

    let failed = '';
    let backend = 0;
    await expect(
      inCommand(async (em) => {
        failed = probeEvent(em);
        await em.flush();
        backend = await backendOf(em);
        throw new Error('refused after the flush');
      }),
    ).rejects.toThrow('refused after the flush');
    expect(await written(failed)).toBe(false);
    // Its session went back to the pool out of any transaction (rolled back, not left open).
    expect(await sessionState(server.databaseUrl, backend)).toBe('idle');
  });

  it('gives a nested em.transactional a savepoint that rolls back alone', async () => {
    let inner = '';
    const outer = await inCommand(async (em) => {
      await em
        .transactional(async (nested) => {
          inner = probeEvent(nested);
          await nested.flush();
          throw new Error('the nested part fails');
        })
        .catch(() => undefined);
      const id = probeEvent(em);
      await em.flush();
      return id;
    });
    expect(await written(inner)).toBe(false);
    expect(await written(outer)).toBe(true);
  });

  it("refuses an ORM query on a command's EntityManager once its transaction has ended, whoever holds the session next", async () => {
    let kept: EntityManager | undefined;
    const backend = await inCommand(async (em) => {
      kept = em;
      return backendOf(em);
    });
    await expect(backendOf(kept!)).rejects.toThrow(/transaction has ended|already complete/);
    // Also while another command holds that session: the query is refused, not run in the other's transaction.
    const other = await inCommand(async (em) => {
      const own = await backendOf(em);
      const stale = await backendOf(kept!).then(() => 'ran', () => 'refused');
      return { own, stale };
    });
    // The pool hands the idle session back to the next command: the refusal was tested on the same session.
    expect(other.own).toBe(backend);
    expect(other.stale).toBe('refused');
    await expect(kept!.find(OutboxMessageSchema, { entityId: 'none' })).rejects.toThrow(/transaction has ended|already complete/);
  });
});

const ENDED = /transaction has ended|already complete/;

const backendAndXid = (em: EntityManager) =>
  em.execute<{ pid: number; xid: string }[]>(em.getKnex().raw('select pg_backend_pid() as pid, txid_current()::text as xid')).then((rows) => rows[0]!);

describe('an EntityManager kept past its command', () => {
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
