import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_QUEUES } from '../../engine/outbox/event-queues.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { jobRequest, stateIds } from '../support/job-fixtures.ts';
import { sharedEnv, startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait-for.ts';

let server: TestServer;
let acme: SiteFixture;
let env: Record<string, string>;
const started: ServerProcess[] = [];

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_POINTS: '100000' });
  // Only the server processes under test may relay this database's outbox.
  await server.services.outboxRelay.stop();
  acme = await createSiteFixture(server, 'acme');
  env = sharedEnv(server, { RATE_LIMIT_POINTS: '100000' });
}, 60_000);
afterAll(async () => {
  await Promise.all(started.map((p) => p.kill('SIGKILL')));
  await server.close();
});

type Seen = { state: string; version: number; allowed: string[] };

/** A job completes when its last stop ends: the job's moves, then each stop's. */
const COMPLETED = ['dispatched', 'accepted', 'in_progress'];
const STOP_COMPLETED = ['en_route', 'arrived', 'completed'];

/** Runs `work` for 0..count-1, eight at a time. */
async function inParallel(count: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < count) await work(next++);
  }));
}

async function observe(process: ServerProcess, ids: string[]): Promise<Map<string, Seen>> {
  const client = process.client('acme').as({ apiKey: acme.keys.dispatcher });
  const seen: [string, Seen][] = [];
  await inParallel(ids.length, async (i) => {
    const timeline = await client.get<{ data: { current_state_id: string; version: number; allowed_moves: { key: string }[] } }>(`/api/job/${ids[i]}/timeline`);
    seen[i] = [ids[i]!, { state: timeline.body.data.current_state_id, version: timeline.body.data.version, allowed: timeline.body.data.allowed_moves.map((m) => m.key) }];
  });
  return new Map(seen);
}

async function outboxFacts() {
  return inTenantScope(server.services.db.orm, { siteId: acme.site.id }, async (em) => {
    const [row] = await em.execute<{ outbox: string; pending: string; events: string }[]>(
      `select (select count(*) from outbox) as outbox, (select count(*) from outbox_pending) as pending,
              (select count(*) from audit_record where (entity_type = 'Job' and action = 'create') or action = 'state_change') as events`,
    );
    // The events the earnings consumer reads (a job completed with a driver): the relay adds only those to its queue.
    const ids: { id: string }[] = await em.execute(
      `select id from outbox where event = 'job:state_change' and payload->'data'->>'phase' = 'completed' and payload->'data'->>'driver_user_id' is not null`,
    );
    return { outbox: Number(row!.outbox), pending: Number(row!.pending), events: Number(row!.events), ids: ids.map((r) => r.id) };
  });
}

describe('a crash (kill -9) and a restart', () => {
  it('keep every job state, version and allowed move, and lose or duplicate no outbox event', async () => {
    const first = await startServerProcess(env);
    started.push(first);
    const client = first.client('acme').as({ apiKey: acme.keys.dispatcher });
    const states = await stateIds(client, 'job');
    const stopStates = await stateIds(client, 'stop');
    const paths = [[], ['dispatched'], ['dispatched', 'accepted'], ['dispatched', 'accepted', 'in_progress'], ['cancelled'], ['dispatched', 'created'], COMPLETED];
    const ids: string[] = [];
    const failures: string[] = [];
    await inParallel(200, async (i) => {
      const path = paths[i % paths.length]!;
      // A completed job has a driver: its last move is an event for the earnings queue, this test's durable witness.
      const driver = path === COMPLETED ? { driver_user_id: acme.users.driver.id } : {};
      const created = await client.post<{ data: { id: string; stops: { id: string }[] } }>('/api/job', jobRequest({ customer_email: `c${i % 7}@shop.example`, ...driver }));
      if (created.status !== 201) {
        failures.push(`create ${i}: ${created.status} ${created.text}`);
        return;
      }
      ids[i] = created.body.data.id;
      for (const key of path) {
        const moved = await client.post('/api/job/state', { job_id: ids[i], workflow_state_id: states[key] });
        if (moved.status !== 200) failures.push(moved.text);
      }
      if (path !== COMPLETED) return;
      for (const stop of created.body.data.stops) {
        for (const key of STOP_COMPLETED) {
          const moved = await client.post('/api/stop/state', { stop_id: stop.id, workflow_state_id: stopStates[key] });
          if (moved.status !== 200) failures.push(moved.text);
        }
      }
    });
    expect(failures).toEqual([]);
    const before = await observe(first, ids);
    await first.kill('SIGKILL');

    const afterCrash = await outboxFacts();
    expect(afterCrash.outbox).toBe(afterCrash.events);

    const second = await startServerProcess(env);
    started.push(second);
    expect(await observe(second, ids)).toEqual(before);
    await waitFor('the restarted relay to drain the outbox', async () => (await outboxFacts()).pending === 0, 15_000);
    const relayed = await outboxFacts();
    expect(relayed.outbox).toBe(afterCrash.outbox);
    const queued = await Promise.all(relayed.ids.map((id) => server.services.queue.getJob(EVENT_QUEUES.earnings, id)));
    expect(queued.filter((job) => job === null)).toHaveLength(0);
    expect(relayed.ids.length).toBeGreaterThan(0);
    expect(new Set(queued.map((job) => job!.id)).size).toBe(relayed.ids.length);
  }, 180_000);
});
