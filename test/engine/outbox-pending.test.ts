import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_QUEUES } from '../../engine/outbox/event-queues.ts';
import { createOutboxRelay, type RelayedEvent } from '../../engine/outbox/outbox-relay.ts';
import { createBullmqQueue } from '../../engine/queue/bullmq-queue.ts';
import type { DurableQueue, QueuedJob } from '../../engine/queue/durable-queue.ts';
import { insertAuditAndOutbox, type DomainEvent } from '../../persistence/outbox.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { openQueueHarness, type QueueHarness } from '../support/queue-harness.ts';
import { sleep, waitFor } from '../support/wait-for.ts';

/**
 * The outbox as an append-only log (migration 0022): each insert queues its rows in `outbox_pending`, the relay
 * deletes those entries in the transaction that sends the rows on, and never writes the rows themselves.
 */
let harness: QueueHarness;
let siteA: string;
let siteB: string;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  harness = await openQueueHarness();
  siteA = (await harness.createSite('pending-a')).id;
  siteB = (await harness.createSite('pending-b')).id;
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).toReversed()) await cleanup();
});
afterAll(async () => {
  await harness.close();
});

const platform = { siteId: null, platform: true } as const;
type OutboxRow = { seq: string; id: string; site_id: string; event: string; entity_id: string; entity_version: number; payload: unknown; created_at: Date };

/** Writes `count` completed-job events of `siteId` through the command path's one statement, one transaction. */
async function writeEvents(siteId: string, count: number): Promise<void> {
  const tag = randomBytes(3).toString('hex');
  const events: DomainEvent[] = Array.from({ length: count }, (_, n) => ({
    siteId,
    event: 'job:state_change',
    entityType: 'job',
    entityId: `job_${tag}_${n % 3}`,
    entityVersion: n + 1,
    data: { id: `job_${tag}_${n % 3}`, phase: 'completed', driver_user_id: 'usr_pending_test' },
    timestamp: new Date('2030-01-01T00:00:00.000Z'),
  }));
  await inTenantScope(harness.orm, { siteId }, (em) => insertAuditAndOutbox(em, [], events));
}

async function outboxRows(): Promise<OutboxRow[]> {
  return inTenantScope(harness.orm, platform, (em) => em.execute<OutboxRow[]>('select * from outbox order by seq'));
}

async function pending(scope: { siteId: string } | typeof platform = platform): Promise<{ seq: string; site_id: string }[]> {
  return inTenantScope(harness.orm, scope, (em) => em.execute('select seq, site_id from outbox_pending order by seq'));
}

function relay(queue: DurableQueue, batchSize: number, vacuumEveryRows?: number) {
  const created = createOutboxRelay({ orm: harness.orm, queue, logger: harness.logger, batchSize, pollIntervalMs: 60_000, vacuumEveryRows });
  cleanups.push(() => created.stop());
  return created;
}

function bullmq(): DurableQueue {
  const queue = createBullmqQueue({ redis: harness.redis, prefix: `${harness.redisPrefix}:${randomBytes(3).toString('hex')}`, logger: harness.logger });
  cleanups.push(() => queue.close());
  return queue;
}

async function vacuums(): Promise<number> {
  const [row] = await harness.orm.em.fork().execute<{ n: number }[]>(`select vacuum_count::int as n from pg_stat_user_tables where relname = 'outbox_pending'`);
  return row!.n;
}

/** Relays whatever an earlier test left, so each test starts with nothing pending. */
async function drain(): Promise<void> {
  const queue = bullmq();
  await relay(queue, 500).relayOnce();
}

describe('outbox_pending', () => {
  it('gets one entry per inserted outbox row, with its seq and site, visible to that site only', async () => {
    await drain();
    await writeEvents(siteA, 4);
    await writeEvents(siteB, 2);
    const rows = await outboxRows();
    const unrelayed = rows.slice(-6);
    expect(await pending()).toEqual(unrelayed.map((row) => ({ seq: row.seq, site_id: row.site_id })));
    expect((await pending({ siteId: siteA })).map((entry) => entry.seq)).toEqual(unrelayed.slice(0, 4).map((row) => row.seq));
    expect((await pending({ siteId: siteB })).map((entry) => entry.seq)).toEqual(unrelayed.slice(4).map((row) => row.seq));
  });

  it('is drained by the relay in seq order across batches, and the outbox rows are left as they were', async () => {
    await drain();
    await writeEvents(siteA, 5);
    await writeEvents(siteB, 3);
    await writeEvents(siteA, 4);
    const before = await outboxRows();
    const expected = before.slice(-12).map((row) => row.id);
    const relayed: RelayedEvent[] = [];
    const relayer = relay(bullmq(), 5);
    relayer.onRelayed((events) => relayed.push(...events));
    expect(await relayer.relayOnce()).toBe(12);
    expect(relayed.map((event) => event.id)).toEqual(expected);
    expect(await pending()).toEqual([]);
    // Append-only: the relay wrote nothing to the rows it sent.
    expect(await outboxRows()).toEqual(before);
    expect(await relayer.relayOnce()).toBe(0);
  });

  it('loses no event and sends none twice when the relay connection dies between its delete and its commit', async () => {
    await drain();
    await writeEvents(siteA, 6);
    const ids = (await outboxRows()).slice(-6).map((row) => row.id);
    const queue = bullmq();
    const delivered: QueuedJob[] = [];
    await queue.process(EVENT_QUEUES.earnings, async (job) => void delivered.push(job));
    let killed = 0;
    const dying: DurableQueue = {
      ...queue,
      // The events reach Redis; then the backend holding the relay's transaction (its advisory lock) is killed, as
      // a crash of the relay process would end it: the delete of the pending entries never commits.
      addMany: async (name, jobs, transaction) => {
        await queue.addMany(name, jobs, transaction);
        if (name !== EVENT_QUEUES.earnings) return;
        const [row] = await harness.orm.em.fork().execute<{ n: number }[]>(
          `select count(pg_terminate_backend(pid))::int as n from pg_locks
           where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())`,
        );
        killed += row!.n;
      },
    };
    await expect(relay(dying, 100).relayOnce()).rejects.toThrow(/terminating connection due to administrator command|connection error/);
    expect(killed).toBe(1);
    // The pool drops the killed connection once its socket has closed (knex marks it then): not before.
    await sleep(200);
    expect((await pending({ siteId: siteA })).length).toBe(6);
    expect(await relay(queue, 100).relayOnce()).toBe(6);
    expect(await pending()).toEqual([]);
    await waitFor('the 6 events to be delivered', () => delivered.length >= 6, 10_000);
    await sleep(200);
    expect(delivered.map((job) => job.id).sort()).toEqual([...ids].sort());
  });

  it('is vacuumed by the relay every so many entries, so dead entries do not pile up where autovacuum is off', async () => {
    await drain();
    const before = await vacuums();
    await writeEvents(siteA, 8);
    const relayer = relay(bullmq(), 4, 10);
    expect(await relayer.relayOnce()).toBe(8);
    await sleep(1200);
    expect(await vacuums()).toBe(before);
    await writeEvents(siteB, 4);
    expect(await relayer.relayOnce()).toBe(4);
    await waitFor('a vacuum of outbox_pending', async () => (await vacuums()) > before, 5000);
  });
});
