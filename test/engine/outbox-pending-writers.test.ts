import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboxRelay, type RelayedEvent } from '../../engine/outbox/outbox-relay.ts';
import { createBullmqQueue } from '../../engine/queue/bullmq-queue.ts';
import { appendOutbox, insertAuditAndOutbox, type DomainEvent } from '../../persistence/outbox.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { openQueueHarness, type QueueHarness } from '../support/queue-harness.ts';

/**
 * Every way of writing an outbox row queues it for the relay exactly once (migration 0022's statement trigger): the
 * command path's audit + outbox statement, the ORM's `appendOutbox`, plain SQL, alone or mixed in one transaction.
 * A row with no entry would never be relayed; one with two would be sent twice. Any change to who writes the
 * pending entries (the eleventh round tried the command path writing its own: README → Engine) must keep this green.
 */
let harness: QueueHarness;
let siteId: string;

beforeAll(async () => {
  harness = await openQueueHarness();
  siteId = (await harness.createSite('pending-writers')).id;
});
afterAll(async () => {
  await harness.close();
});

const platform = { siteId: null, platform: true } as const;

function event(tag: string, n: number): DomainEvent {
  return {
    siteId,
    event: 'job:state_change',
    entityType: 'job',
    entityId: `job_${tag}_${n}`,
    entityVersion: n + 1,
    data: { id: `job_${tag}_${n}`, phase: 'dispatched' },
    timestamp: new Date('2030-01-01T00:00:00.000Z'),
  };
}

describe('outbox writers', () => {
  it('queue each row once and the relay sends every one, whichever way it was written, in one transaction or apart', async () => {
    const queue = createBullmqQueue({ redis: harness.redis, prefix: `${harness.redisPrefix}:${randomBytes(3).toString('hex')}`, logger: harness.logger });
    const relay = createOutboxRelay({ orm: harness.orm, queue, logger: harness.logger, batchSize: 500, pollIntervalMs: 60_000 });
    try {
      await relay.relayOnce();
      const tag = randomBytes(3).toString('hex');
      const sql = `insert into outbox (id, site_id, event, entity_type, entity_id, entity_version, payload, created_at) values (?, ?, 'job:state_change', 'job', ?, 1, '{}'::jsonb, now()), (?, ?, 'job:state_change', 'job', ?, 1, '{}'::jsonb, now())`;
      await inTenantScope(harness.orm, { siteId }, async (em) => {
        await insertAuditAndOutbox(em, [], [event(tag, 0), event(tag, 1)]);
        appendOutbox(em, event(tag, 2));
        await em.flush();
        await em.execute(sql, [`obx_${tag}_sql_a`, siteId, `job_${tag}_3`, `obx_${tag}_sql_b`, siteId, `job_${tag}_4`]);
        await insertAuditAndOutbox(em, [], [event(tag, 5)]);
      });
      await inTenantScope(harness.orm, { siteId }, async (em) => appendOutbox(em, event(tag, 6)));
      await inTenantScope(harness.orm, { siteId }, (em) => insertAuditAndOutbox(em, [], [event(tag, 7)]));

      const written = await inTenantScope(harness.orm, platform, (em) =>
        em.execute<{ seq: string; id: string; entries: number }[]>(
          `select o.seq, o.id, (select count(*)::int from outbox_pending p where p.seq = o.seq) as entries
           from outbox o where o.entity_id like ? order by o.seq`,
          [`job_${tag}_%`],
        ),
      );
      expect(written.map((row) => row.entries)).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);

      const relayed: RelayedEvent[] = [];
      relay.onRelayed((events) => relayed.push(...events));
      expect(await relay.relayOnce()).toBe(8);
      expect(relayed.map((e) => e.id)).toEqual(written.map((row) => row.id));
      expect(await relay.relayOnce()).toBe(0);
    } finally {
      await relay.stop();
      await queue.close();
    }
  });
});
