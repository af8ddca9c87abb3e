import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRecordValues } from '../../../persistence/audit.ts';
import { auditAndOutboxStatement } from '../../../persistence/outbox.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { GroupCommit } from '../../../engine/runtime/group-commit.ts';
import { createSiteFixture, type SiteFixture } from '../../support/fixtures.ts';
import { startTestServer, type TestServer } from '../../support/test-server.ts';

let server: TestServer;
let acme: SiteFixture;
let globex: SiteFixture;

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  globex = await createSiteFixture(server, 'globex');
});
afterAll(() => server.close());

type Session = { backend: number; prepared: boolean };

/** A unit's value: its number, and whether its session had the batch's audit + outbox statement prepared. */
type Written = { n: number; session: Session };

const entityId = 'job_batch_records_probe';

describe('the batch statement (audit records and outbox rows written once per group-commit batch)', () => {
  it('writes every unit’s audit record and outbox row, nulls and JSON as given, outbox rows in the units’ order, prepared once its session sent it', async () => {
    const siteId = acme.site.id;
    const actor = { userId: acme.users.dispatcher.id, applicationId: null, requestId: null };
    const groupCommit = new GroupCommit<Written>({
      orm: server.services.db.orm,
      maxConcurrent: 1,
      commitStatement: (values) =>
        auditAndOutboxStatement(
          values.map(({ n }) =>
            auditRecordValues(actor, { siteId, action: 'state_change', entityType: 'Job', entityId, before: n === 1 ? null : { version: n - 1 }, after: { version: n, note: `it's "${n}"` } }),
          ),
          values.map(({ n }) => ({ siteId, event: 'job:state_change', entityType: 'job', entityId, entityVersion: n, data: { n, nested: { list: [n, null] } }, timestamp: new Date(n * 1000) })),
        ),
    });
    const unit = (n: number) => ({
      siteId,
      userId: actor.userId,
      work: async (em: EntityManager) => {
        const [session] = await em.execute<Session[]>(
          `select pg_backend_pid() as backend, exists (select 1 from pg_prepared_statements where statement like '%jsonb_to_recordset%') as prepared`,
        );
        return { n, session: session! };
      },
    });
    const sessions: Session[] = [];
    // Batches of three, one after another: 8 batches, numbered in the order their units ran.
    for (let batch = 0; batch < 8; batch += 1) {
      const written = await Promise.all([1, 2, 3].map((i) => groupCommit.run(unit(batch * 3 + i))));
      sessions.push(written[0]!.session);
    }
    const repeated = sessions.filter((s, i) => sessions.slice(0, i).some((earlier) => earlier.backend === s.backend));
    expect(repeated.length).toBeGreaterThan(0);
    expect(repeated.every((s) => s.prepared)).toBe(true);

    const [outbox, audits] = await inTenantScope(server.services.db.orm, { siteId }, (em) =>
      Promise.all([
        em.execute<{ entity_version: number; payload: { timestamp: string; data: unknown }; created_at: Date }[]>(
          'select entity_version, payload, created_at from outbox where entity_id = ? order by seq',
          [entityId],
        ),
        em.execute<{ previous_data: unknown; new_data: { note: string }; request_id: string | null; user_id: string }[]>(
          `select previous_data, new_data, request_id, user_id from audit_record where entity_id = ? order by (new_data->>'version')::int`,
          [entityId],
        ),
      ]),
    );
    const numbers = Array.from({ length: 24 }, (_, i) => i + 1);
    expect(outbox.map((row) => row.entity_version)).toEqual(numbers);
    expect(outbox[4]!.payload).toEqual({ event: 'job:state_change', timestamp: new Date(5000).toISOString(), data: { n: 5, nested: { list: [5, null] } } });
    expect(audits).toHaveLength(24);
    expect(audits[0]).toEqual({ previous_data: null, new_data: { version: 1, note: `it's "1"` }, request_id: null, user_id: actor.userId });
    expect(audits[23]!.previous_data).toEqual({ version: 23 });
  });
});

/** The transaction a unit ran in. */
const transactionId = async (em: EntityManager): Promise<string> => {
  const [row] = await em.execute<{ tx: string }[]>('select txid_current()::text as tx');
  return row!.tx;
};

/** A group commit of two slots that records each committed batch's size. */
function recordingGroupCommit(pipeline: boolean): { groupCommit: GroupCommit<string>; batchSizes: number[] } {
  const batchSizes: number[] = [];
  const groupCommit = new GroupCommit<string>({
    orm: server.services.db.orm,
    maxConcurrent: 2,
    pipeline,
    commitStatement: (values) => (batchSizes.push(values.length), null),
  });
  return { groupCommit, batchSizes };
}

const run = (groupCommit: GroupCommit<string>, work: (em: EntityManager) => Promise<string>, site: SiteFixture = acme) =>
  groupCommit.run({ siteId: site.site.id, userId: site.users.admin.id, work });

describe('group commit slots (units that waited are spread over the free transactions)', () => {
  it.each([true, false])('splits units that arrive together over both free slots (pipelined: %s)', async (pipeline) => {
    const { groupCommit, batchSizes } = recordingGroupCommit(pipeline);
    const transactions = await Promise.all(Array.from({ length: 8 }, () => run(groupCommit, transactionId)));
    expect(batchSizes).toEqual([4, 4]);
    expect(new Set(transactions).size).toBe(2);
  });

  it('gives every unit that waited to the one slot that is free while the other batch runs', async () => {
    const { groupCommit, batchSizes } = recordingGroupCommit(true);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = run(groupCommit, async (em) => {
      await held;
      return transactionId(em);
    });
    // The slow unit's batch has started (a turn of the event loop) before the others arrive.
    await new Promise((resolve) => setImmediate(resolve));
    const others = await Promise.all(Array.from({ length: 6 }, () => run(groupCommit, transactionId)));
    release();
    const slowTransaction = await slow;
    expect(batchSizes).toEqual([6, 1]);
    expect(new Set(others).size).toBe(1);
    expect(others).not.toContain(slowTransaction);
  });

  it('gives the second slot every unit of the next site when the first site had fewer than its share', async () => {
    const { groupCommit, batchSizes } = recordingGroupCommit(true);
    const [acmeTransactions, globexTransactions] = await Promise.all([
      Promise.all(Array.from({ length: 2 }, () => run(groupCommit, transactionId))),
      Promise.all(Array.from({ length: 6 }, () => run(groupCommit, transactionId, globex))),
    ]);
    expect(batchSizes.toSorted((a, b) => a - b)).toEqual([2, 6]);
    expect([new Set(acmeTransactions).size, new Set(globexTransactions).size]).toEqual([1, 1]);
  });

  it('refuses a size or a number of slots below one, which would leave every caller unanswered', () => {
    expect(() => new GroupCommit({ orm: server.services.db.orm, maxBatch: 0 })).toThrow(RangeError);
    expect(() => new GroupCommit({ orm: server.services.db.orm, maxConcurrent: 0 })).toThrow(RangeError);
  });
});
