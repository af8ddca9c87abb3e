import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOVE_BATCH } from '../../engine/outbox/outbox-relay.ts';
import { insertAuditAndOutbox, type DomainEvent } from '../../persistence/outbox.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { openQueueHarness, type QueueHarness } from '../support/queue-harness.ts';

/**
 * The relay's batch statement must read about one batch of `outbox_pending` entries whatever the table's statistics
 * say. Found in bench:engine: after the relay's own vacuum of a nearly empty `outbox_pending` (statistics of a few
 * rows), the planner took the pending entries as one row and ran `seq in (select … limit n)` as a nested loop that
 * walked every pending entry and re-ran the limited scan for each one: quadratic in the backlog (7,384 pending
 * entries: 1.46 million entries read, 0.77 s for one batch of 200), so the relay fell further behind with every batch.
 */
let harness: QueueHarness;
let siteId: string;
const BATCH = 200;

beforeAll(async () => {
  harness = await openQueueHarness();
  siteId = (await harness.createSite('relay-plan')).id;
});
afterAll(async () => {
  await harness.close();
});

async function writeEvents(count: number): Promise<void> {
  const tag = randomBytes(3).toString('hex');
  const events: DomainEvent[] = Array.from({ length: count }, (_, n) => ({
    siteId,
    event: 'job:state_change',
    entityType: 'job',
    entityId: `job_${tag}_${n}`,
    entityVersion: 1,
    data: { id: `job_${tag}_${n}`, phase: 'completed' },
    timestamp: new Date('2030-01-01T00:00:00.000Z'),
  }));
  await inTenantScope(harness.orm, { siteId }, (em) => insertAuditAndOutbox(em, [], events));
}

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Actual Rows': number; 'Actual Loops': number; 'Rows Removed by Filter'?: number; Plans?: PlanNode[] };

/** Entries of `outbox_pending` that the plan's scans returned or filtered out, over all their loops (the delete itself not counted). */
function pendingEntriesRead(node: PlanNode): number {
  const own = node['Relation Name'] === 'outbox_pending' && node['Node Type'] !== 'ModifyTable' ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) * node['Actual Loops'] : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + pendingEntriesRead(child), 0);
}

/** Runs the batch statement as the relay does (platform scope, its planner settings) under EXPLAIN ANALYZE, rolled back. */
async function explainBatch(): Promise<{ moved: number; read: number }> {
  const rollback = new Error('rollback');
  let result = { moved: 0, read: 0 };
  await inTenantScope(harness.orm, { siteId: null, platform: true }, async (em) => {
    await em.execute(`select set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)`);
    // Prepared and planned once for any batch size, as the relay's session runs it (a generic plan).
    await em.execute(`select set_config('plan_cache_mode', 'force_generic_plan', true)`);
    await em.execute(`prepare relay_plan_test as ${MOVE_BATCH.replace('?', '$1::int')}`);
    const [row] = await em.execute<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(`explain (analyze, format json) execute relay_plan_test(${BATCH})`);
    const plan = row!['QUERY PLAN'][0].Plan;
    result = { moved: plan['Actual Rows'], read: pendingEntriesRead(plan) };
    throw rollback;
  }).catch((error: unknown) => {
    if (error !== rollback) throw error;
  });
  return result;
}

describe('the outbox relay batch statement', () => {
  it('reads about one batch of pending entries with a backlog, after a vacuum saw the table nearly empty', async () => {
    // Statistics of a table whose pages hold a couple of entries (what the relay's vacuum records while it keeps up
    // with a steady flow), then a backlog that fills those pages again.
    await writeEvents(3000);
    await inTenantScope(harness.orm, { siteId: null, platform: true }, (em) => em.execute('delete from outbox_pending'));
    await writeEvents(2);
    await harness.orm.em.fork().getConnection().execute('vacuum outbox_pending', [], 'run');
    await writeEvents(3000);
    const { moved, read } = await explainBatch();
    expect(moved).toBe(BATCH);
    // The batch found in key order, then its entries deleted by key: two reads of each entry.
    expect(read).toBeLessThanOrEqual(2 * BATCH);
  });
});
