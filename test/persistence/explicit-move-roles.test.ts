import type { EntityManager } from '@mikro-orm/postgresql';
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../persistence/ids.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { sessionClient } from '../support/fixtures.ts';
import type { ApiClient } from '../support/http-client.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';

// Migration 0049: a move naming no roles meant every role until role-less moves became staff only. A custom workflow
// stored before then, whose role-less moves its drivers made, keeps working: the migration names every role on them.

type One<T> = { data: T };
type Transition = { from: string; to: string; roles?: string[]; event?: string };
type Workflow = { states: Record<string, unknown>[]; transitions: Transition[] };

const MIGRATION = '0049-explicit-move-roles';
const EVERY_ROLE = ['admin', 'dispatcher', 'driver', 'customer'];
const site = useOneSite();
let driver: ApiClient;

beforeAll(async () => {
  driver = await sessionClient(site.server, 'acme', site.acme.users.driver);
});

const inSite = <T>(work: (em: EntityManager) => Promise<T>) => inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, work);

/**
 * Stores a stop workflow version as one written before 0049 would be: the default states, every move role-less but
 * the office's dispatch (kept to `admin` only, to show that named roles are left alone). Written with SQL, as the
 * server never saw it: nothing of it is cached.
 */
async function storeOldStyleStopWorkflow(): Promise<string> {
  const current = (await site.acme.as.admin.get<One<Workflow>>('/api/workflow?entity_type=stop')).body.data;
  const transitions = current.transitions.map(({ roles: _roles, ...move }) => (move.from === 'pending' && move.to === 'assigned' ? { ...move, roles: ['admin'] } : move));
  const id = newId('workflow');
  await inSite(async (em) => {
    await em.execute("update workflow set is_current = false where entity_type = 'stop' and is_current");
    await em.execute(
      `insert into workflow (id, site_id, entity_type, version, is_current, states, transitions, created_at)
       select ?, ?, 'stop', max(version) + 1, true, ?, ?, now() from workflow where entity_type = 'stop'`,
      [id, site.acme.site.id, JSON.stringify(current.states), JSON.stringify(transitions)],
    );
  });
  return id;
}

/** Runs migration 0049 again, through the migrator, as a database upgraded from before it would. */
async function migrateAgain(): Promise<string[]> {
  await inSite((em) => em.execute('delete from mikro_orm_migrations where name = ?', [MIGRATION]));
  return site.server.services.db.migrate();
}

describe('migration 0049: role-less moves of stored workflows', () => {
  it('names every role on them, leaves named roles alone, and a driver still completes stops with such a workflow', async () => {
    const workflowId = await storeOldStyleStopWorkflow();
    expect(await migrateAgain()).toEqual([MIGRATION]);

    const [row] = await inSite((em) => em.execute<{ transitions: Transition[] }[]>('select transitions from workflow where id = ?', [workflowId]));
    const rolesOf = (from: string, to: string) => row!.transitions.find((t) => t.from === from && t.to === to)?.roles;
    expect(rolesOf('pending', 'assigned')).toEqual(['admin']);
    expect(rolesOf('arrived', 'completed')).toEqual(EVERY_ROLE);
    expect(row!.transitions.every((t) => t.roles !== undefined)).toBe(true);
    const shown = (await site.acme.as.admin.get<One<Workflow>>('/api/workflow?entity_type=stop')).body.data;
    expect(shown.transitions.find((t) => t.from === 'en_route' && t.to === 'arrived')?.roles).toEqual(EVERY_ROLE);

    // What the driver's app does with it: en route, arrived, completed on both stops, and the job completes.
    const job = await createJob(site.acme.as.dispatcher, { driver_user_id: site.acme.users.driver.id });
    const jobStates = await stateIds(site.acme.as.admin, 'job');
    expect((await site.acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched })).status).toBe(200);
    const stopStates = await stateIds(site.acme.as.admin, 'stop');
    for (const stop of job.stops) {
      for (const state of ['en_route', 'arrived', 'completed']) {
        const moved = await driver.post('/api/driver/stop/state', { stop_id: stop.id, workflow_state_id: stopStates[state] });
        expect([state, moved.status], moved.text).toEqual([state, 200]);
      }
    }
    const done = await site.acme.as.admin.get<One<{ workflow_state_id: string }>>(`/api/job/${job.id}`);
    expect(done.body.data.workflow_state_id).toBe(jobStates.completed);
  });

  it('changes nothing when run again', async () => {
    const before = await inSite((em) => em.execute<{ id: string; transitions: unknown }[]>('select id, transitions from workflow order by id'));
    expect(await migrateAgain()).toEqual([MIGRATION]);
    expect(await inSite((em) => em.execute('select id, transitions from workflow order by id'))).toEqual(before);
  });
});
