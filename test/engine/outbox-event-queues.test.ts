import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_QUEUE_READS, EVENT_QUEUES } from '../../engine/outbox/event-queues.ts';
import { createOutboxRelay } from '../../engine/outbox/outbox-relay.ts';
import type { DurableQueue, NewJob } from '../../engine/queue/durable-queue.ts';
import { createTableQueue } from '../../engine/queue/table-queue.ts';
import { newId } from '../../persistence/ids.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { openQueueHarness, type QueueHarness } from '../support/queue-harness.ts';

let harness: QueueHarness;
let siteId: string;

beforeAll(async () => {
  harness = await openQueueHarness();
  siteId = (await harness.createSite('consumers')).id;
});
afterAll(() => harness.close());

/** Records every bulk add by queue name, then adds for real. */
function recordingAdds(queue: DurableQueue): { queue: DurableQueue; added: Map<string, NewJob[]> } {
  const added = new Map<string, NewJob[]>();
  return {
    added,
    queue: {
      ...queue,
      addMany: async (name, jobs, transaction) => {
        added.set(name, [...(added.get(name) ?? []), ...jobs]);
        await queue.addMany(name, jobs, transaction);
      },
    },
  };
}

const completed = (driver: string | null) => ({ phase: 'completed', driver_user_id: driver });

describe('the relay and the consumers of outbox events', () => {
  it('adds to the earnings queue only the events its consumer acts on: a job completed with a driver', async () => {
    const events: [string, Record<string, unknown>][] = [
      ['job:create', completed('usr_consumers')],
      ['job:state_change', completed('usr_consumers')],
      ['stop:state_change', completed('usr_consumers')],
      ['job:state_change', { phase: 'assigned', driver_user_id: 'usr_consumers' }],
      ['job:state_change', completed(null)],
      ['job:state_change', completed('usr_consumers')],
      ['job:delete', completed('usr_consumers')],
    ];
    const rows = events.map(([event, data], n) => ({ id: newId('outbox'), event, entityId: `job_consumers_${n}`, data: { id: `job_consumers_${n}`, ...data } }));
    const read = [rows[1]!, rows[5]!];
    for (const row of rows) expect(EVENT_QUEUE_READS[EVENT_QUEUES.earnings](row.event, row.data)).toBe(read.includes(row));
    await inTenantScope(harness.orm, { siteId: null, platform: true }, async (em) => {
      for (const row of rows) {
        await em.execute(
          `insert into outbox (id, site_id, event, entity_type, entity_id, entity_version, payload, created_at) values (?, ?, ?, 'job', ?, 1, ?::jsonb, now())`,
          [row.id, siteId, row.event, row.entityId, JSON.stringify({ event: row.event, timestamp: '2030-01-01T00:00:00.000Z', data: row.data })],
        );
      }
    });
    const table = createTableQueue({ orm: harness.orm, logger: harness.logger, pollIntervalMs: 60_000 });
    const recording = recordingAdds(table);
    const relay = createOutboxRelay({ orm: harness.orm, queue: recording.queue, logger: harness.logger });
    try {
      expect(await relay.relayOnce()).toBe(rows.length);
      const earnings = recording.added.get(EVENT_QUEUES.earnings) ?? [];
      expect(earnings.map((job) => job.options.jobId)).toEqual(read.map((row) => row.id));
      const stored = await harness.orm.em.fork().execute<{ id: string }[]>('select id from queue_job where queue = ? and id in (?) order by seq', [EVENT_QUEUES.earnings, rows.map((row) => row.id)]);
      expect(stored.map((row) => row.id)).toEqual(earnings.map((job) => job.options.jobId));
      // Every row is relayed all the same, the ones no consumer reads included.
      const pending = await inTenantScope(harness.orm, { siteId: null, platform: true }, (em) =>
        em.execute<{ n: number }[]>('select count(*)::int as n from outbox_pending p join outbox o on o.seq = p.seq where o.id in (?)', [rows.map((row) => row.id)]),
      );
      expect(pending[0]!.n).toBe(0);
    } finally {
      await relay.stop();
      await table.close();
    }
  });
});
