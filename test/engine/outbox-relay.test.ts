import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EVENT_QUEUES } from '../../engine/outbox/event-queues.ts';
import { createOutboxRelay, type OutboxRelay } from '../../engine/outbox/outbox-relay.ts';
import { createBullmqQueue } from '../../engine/queue/bullmq-queue.ts';
import type { DurableQueue, QueuedJob } from '../../engine/queue/durable-queue.ts';
import { createTableQueue } from '../../engine/queue/table-queue.ts';
import { newId } from '../../persistence/ids.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { openQueueHarness, type QueueHarness } from '../support/queue-harness.ts';
import { sleep, waitFor } from '../support/wait-for.ts';

/** A consumer's queue (every one gets the same adds); webhooks are fanned out by the relay, see the webhook tests. */
const CONSUMER_QUEUE = EVENT_QUEUES.earnings;

let harness: QueueHarness;
let siteId: string;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  harness = await openQueueHarness();
  siteId = (await harness.createSite('relay')).id;
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).toReversed()) await cleanup();
});
afterAll(async () => {
  await harness.close();
});

const BACKENDS = [
  { backend: 'table', open: () => createTableQueue({ orm: harness.orm, logger: harness.logger, pollIntervalMs: 20 }) },
  {
    // A prefix per test: the `events` queue then starts empty in each test.
    backend: 'bullmq',
    open: () => createBullmqQueue({ redis: harness.redis, prefix: `${harness.redisPrefix}:${randomBytes(3).toString('hex')}`, logger: harness.logger }),
  },
] as const;

type Row = { id: string; entityId: string; version: number };

/** Writes outbox rows as the command path does: `perEntity` successive versions for each of `entities` entities. */
async function insertOutboxRows(entities: number, perEntity: number): Promise<Row[]> {
  const tag = randomBytes(3).toString('hex');
  const rows: Row[] = [];
  for (let version = 1; version <= perEntity; version++) {
    for (let e = 0; e < entities; e++) rows.push({ id: newId('outbox'), entityId: `job_${tag}_${e}`, version });
  }
  await inTenantScope(harness.orm, { siteId: null, platform: true }, async (em) => {
    for (let start = 0; start < rows.length; start += 200) {
      const slice = rows.slice(start, start + 200);
      const values = slice.map(() => `(?, ?, 'job:state_change', 'job', ?, ?, ?::jsonb, now())`).join(', ');
      const params = slice.flatMap((row) => [row.id, siteId, row.entityId, row.version, JSON.stringify(envelope(row))]);
      await em.execute(`insert into outbox (id, site_id, event, entity_type, entity_id, entity_version, payload, created_at) values ${values}`, params);
    }
  });
  return rows;
}

/** A job completed with a driver: an event the earnings consumer reads, so the relay adds every one to its queue. */
function envelope(row: Row) {
  return {
    event: 'job:state_change',
    timestamp: '2030-01-01T00:00:00.000Z',
    data: { id: row.entityId, version: row.version, phase: 'completed', driver_user_id: 'usr_relay_test' },
  };
}

async function pendingCount(ids: string[]): Promise<number> {
  const [row] = await inTenantScope(harness.orm, { siteId: null, platform: true }, (em) =>
    em.execute<{ n: number }[]>('select count(*)::int as n from outbox_pending p join outbox o on o.seq = p.seq where o.id in (?)', [ids]),
  );
  return row!.n;
}

/** Counts what the relay adds to a consumer's queue (every consumer's queue gets the same adds), so a row sent twice shows even though the queue would dedupe it. */
function countingAdds(queue: DurableQueue): { queue: DurableQueue; added: string[] } {
  const added: string[] = [];
  const add: DurableQueue['add'] = (name, event, data, options) =>
    queue.add(name, event, data, options).then(() => void (name === CONSUMER_QUEUE && added.push(options.jobId)));
  const addMany: DurableQueue['addMany'] = (name, jobs, transaction) =>
    queue.addMany(name, jobs, transaction).then(() => void (name === CONSUMER_QUEUE && added.push(...jobs.map((job) => job.options.jobId))));
  return { added, queue: { ...queue, add, addMany } };
}

describe.each(BACKENDS)('outbox relay into the $backend queue', ({ open }) => {
  let queue: DurableQueue;
  let delivered: QueuedJob[];

  beforeEach(async () => {
    await harness.orm.em.fork().execute(`delete from queue_job where queue = ?`, [CONSUMER_QUEUE]);
    queue = open();
    cleanups.push(() => queue.close());
    delivered = [];
    await queue.process(CONSUMER_QUEUE, async (job) => void delivered.push(job));
  });

  function relay(options: { queue?: DurableQueue; pollIntervalMs?: number; batchSize?: number } = {}): OutboxRelay {
    const created = createOutboxRelay({ orm: harness.orm, logger: harness.logger, queue, ...options });
    cleanups.push(() => created.stop());
    return created;
  }

  /** Waits for every row to reach the consumer, then checks none came twice and each entity's events kept their order. */
  async function expectDeliveredOnceInOrder(rows: Row[]): Promise<void> {
    const ids = new Set(rows.map((row) => row.id));
    await waitFor(`${rows.length} events to be delivered`, () => delivered.filter((job) => ids.has(job.id)).length >= rows.length, 10_000);
    await sleep(200);
    const mine = delivered.filter((job) => ids.has(job.id));
    expect(mine.map((job) => job.id).sort()).toEqual([...ids].sort());
    const versionsByEntity = new Map<string, number[]>();
    for (const job of mine) {
      const data = job.data as { entity_id: string; entity_version: number };
      versionsByEntity.set(data.entity_id, [...(versionsByEntity.get(data.entity_id) ?? []), data.entity_version]);
    }
    for (const versions of versionsByEntity.values()) expect(versions).toEqual([...versions].sort((a, b) => a - b));
  }

  it('moves each pending row to the events queue once, in seq order per entity, with the envelope and ids', async () => {
    const rows = await insertOutboxRows(3, 10);
    const relayer = relay();
    expect(await relayer.relayOnce()).toBe(30);
    expect(await relayer.relayOnce()).toBe(0);
    expect(await pendingCount(rows.map((row) => row.id))).toBe(0);
    await expectDeliveredOnceInOrder(rows);
    const first = delivered.find((job) => job.id === rows[0]!.id)!;
    expect(first).toMatchObject({
      name: 'job:state_change',
      data: {
        ...envelope(rows[0]!),
        outbox_id: rows[0]!.id,
        site_id: siteId,
        entity_type: 'job',
        entity_id: rows[0]!.entityId,
        entity_version: 1,
      },
    });
  });

  it('relays 500 rows exactly once with two relays running at the same time', async () => {
    const rows = await insertOutboxRows(10, 50);
    const counting = countingAdds(queue);
    const [a, b] = [relay({ queue: counting.queue, batchSize: 40 }), relay({ queue: counting.queue, batchSize: 40 })];
    const moved = await Promise.all([a.relayOnce(), b.relayOnce(), a.relayOnce(), b.relayOnce()]);
    expect(moved.reduce((sum, n) => sum + n, 0)).toBe(500);
    expect(counting.added).toHaveLength(500);
    expect(new Set(counting.added).size).toBe(500);
    await expectDeliveredOnceInOrder(rows);
  });

  it('does not send rows again after a restart of the relay, and sends new ones on a kick', async () => {
    const before = await insertOutboxRows(2, 10);
    const first = relay();
    expect(await first.relayOnce()).toBe(20);
    await first.stop();

    const counting = countingAdds(queue);
    const restarted = relay({ queue: counting.queue, pollIntervalMs: 60_000 });
    restarted.start();
    await sleep(200);
    expect(counting.added).toEqual([]);

    const after = await insertOutboxRows(1, 3);
    const kickedAt = Date.now();
    restarted.kick();
    await waitFor('the kicked pass to relay the new rows', async () => (await pendingCount(after.map((row) => row.id))) === 0, 2000);
    expect(Date.now() - kickedAt).toBeLessThan(1000);
    expect(counting.added).toEqual(after.map((row) => row.id));
    await expectDeliveredOnceInOrder([...before, ...after]);
  });

  it('delivers nothing twice when a relay dies after enqueueing but before marking its rows relayed', async () => {
    const rows = await insertOutboxRows(2, 5);
    const dying: DurableQueue = {
      ...queue,
      // Dies once the webhook consumer's queue has every row.
      addMany: async (name, jobs, transaction) => {
        await queue.addMany(name, jobs, transaction);
        if (name === CONSUMER_QUEUE) throw new Error('process killed');
      },
    };
    await expect(relay({ queue: dying }).relayOnce()).rejects.toThrow('process killed');
    expect(await pendingCount(rows.map((row) => row.id))).toBe(rows.length);
    expect(await relay().relayOnce()).toBe(rows.length);
    await expectDeliveredOnceInOrder(rows);
  });
});
