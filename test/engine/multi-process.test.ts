import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createOperator, createSiteFixture, signIn, type SiteFixture } from '../support/fixtures.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { sharedEnv, startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
let acme: SiteFixture;
let processes: ServerProcess[];

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_POINTS: '100000' });
  acme = await createSiteFixture(server, 'acme');
  const env = sharedEnv(server, { RATE_LIMIT_POINTS: '100000' });
  processes = await Promise.all([startServerProcess(env), startServerProcess(env)]);
}, 60_000);
afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill()));
  await server.close();
});

type Move = { before: { workflow_state_id: string; version: number }; after: { workflow_state_id: string; version: number } };

describe('two server processes on one database', () => {
  it('lose no update under 50 concurrent conflicting commands on one job: accepted moves chain, the rest get 409', async () => {
    const states = await stateIds(acme.as.admin, 'job');
    const workflow = await acme.as.admin.get<{ data: { transitions: { from: string; to: string }[]; states: { id: string; key: string }[] } }>('/api/workflow?entity_type=job');
    const keyOf = new Map(workflow.body.data.states.map((s) => [s.id, s.key]));
    const job = await createJob(acme.as.dispatcher);
    const targets = ['created', 'dispatched', 'accepted'];
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        processes[i % 2]!.client('acme').as({ apiKey: acme.keys.dispatcher }).post('/api/job/state', { job_id: job.id, workflow_state_id: states[targets[(i * 7) % 3]!] }),
      ),
    );
    const accepted = responses.filter((r) => r.status === 200).length;
    const refused = responses.filter((r) => r.status === 409);
    expect(accepted + refused.length).toBe(50);
    expect(accepted).toBeGreaterThan(1);
    expect(new Set(refused.map((r) => r.body.code))).toSatisfy((codes: Set<unknown>) => [...codes].every((c) => c === 'INVALID_TRANSITION' || c === 'VERSION_CONFLICT'));

    const moves: Move[] = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, async (em) => {
      const rows: { previous_data: Move['before']; new_data: Move['after'] }[] = await em.execute(
        `select previous_data, new_data from audit_record where entity_id = ? and action = 'state_change' order by (new_data->>'version')::int`,
        [job.id],
      );
      return rows.map((r) => ({ before: r.previous_data, after: r.new_data }));
    });
    expect(moves).toHaveLength(accepted);
    let state = states.created!;
    let version = 1;
    for (const move of moves) {
      expect(move.before).toMatchObject({ workflow_state_id: state, version });
      const declared = workflow.body.data.transitions.some((t) => t.from === keyOf.get(state) && t.to === keyOf.get(move.after.workflow_state_id));
      expect(declared).toBe(true);
      state = move.after.workflow_state_id;
      version += 1;
    }
    const final = await acme.as.admin.get<{ data: { workflow_state_id: string; version: number } }>(`/api/job/${job.id}`);
    expect(final.body.data).toMatchObject({ workflow_state_id: state, version: 1 + accepted });
  }, 60_000);

  it('a site deactivated through one process is refused at once by another that had it cached', async () => {
    const brief = await createSiteFixture(server, 'brief');
    const other = processes[0]!.client('brief').as({ apiKey: brief.keys.dispatcher });
    expect((await other.get('/api/auth/me')).status).toBe(200);
    const operator = await createOperator(server);
    const session = await signIn(server.client(null), operator.email, operator.password);
    const deactivated = await server.client(null).as({ accessToken: session.access_token }).put('/api/site', { id: brief.site.id, is_active: false });
    expect(deactivated.status).toBe(200);
    await expect.poll(async () => (await other.get('/api/auth/me')).body.code, { timeout: 2_000 }).toBe('SITE_INACTIVE');
  });

  it('a job created through one process starts in the workflow another process just made current', async () => {
    type WorkflowBody = { data: { id: string; version: number; states: { id: string; key: string; name: string }[]; transitions: unknown[] } };
    const other = processes[1]!.client('acme').as({ apiKey: acme.keys.dispatcher });
    // The other process creates a job first, so it holds the current versions (job creation reads only their ids then).
    const before = await createJob(other);
    const current = (await acme.as.admin.get<WorkflowBody>('/api/workflow?entity_type=job')).body.data;
    expect(before.workflow_state_id).toBe(current.states.find((s) => s.key === 'created')!.id);
    const states = current.states.map(({ id: _id, ...state }) => (state.key === 'created' ? { ...state, name: 'Received' } : state));
    const replaced = await acme.as.admin.put<WorkflowBody>('/api/workflow', { entity_type: 'job', states, transitions: current.transitions });
    expect(replaced.body.data.version).toBe(current.version + 1);
    const fresh = await createJob(other);
    const created = replaced.body.data.states.find((s) => s.key === 'created')!;
    expect(created.id).not.toBe(before.workflow_state_id);
    expect(fresh).toMatchObject({ workflow_state_id: created.id, workflow_state: { key: 'created', name: 'Received' } });
  });
});
