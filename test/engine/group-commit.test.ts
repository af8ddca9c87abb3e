import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandContext } from '../../engine/engine.ts';
import { DomainError } from '../../engine/domain-error.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { createJob } from '../support/job-fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
let acme: SiteFixture;
let ctx: CommandContext;

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  ctx = { siteId: acme.site.id, actor: { userId: acme.users.dispatcher.id, applicationId: null, requestId: null, role: 'dispatcher' } };
});
afterAll(() => server.close());

/** What a command left behind, read inside the tenant's scope as the application reads. */
async function written(jobIds: string[]): Promise<{ audits: number; events: number; versions: number[] }> {
  const [row]: { audits: number; events: number; versions: number[] }[] = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
    em.execute(
      `select (select count(*)::int from audit_record where action = 'state_change' and entity_id in (?)) as audits,
              (select count(*)::int from outbox where event = 'job:state_change' and entity_id in (?)) as events,
              (select array_agg(version order by id) from job where id in (?)) as versions`,
      [jobIds, jobIds, jobIds],
    ),
  );
  return row!;
}

describe('group commit (commands arriving together share a transaction)', () => {
  it('commits each move with its audit record and event, while refused or failing moves in the same batches write nothing', async () => {
    const jobs = await Promise.all(Array.from({ length: 12 }, () => createJob(acme.as.dispatcher)));
    const ids = jobs.map((j) => j.id);
    // 12 moves that succeed, interleaved with 12 that fail at different points: an unknown id (404 after a read)
    // and a move the workflow refuses (409 before any write).
    const attempts = ids.flatMap((id, i) => [
      server.services.engine.transition(ctx, 'job', id, { kind: 'phase', event: 'cancel' }, { cancellationNotes: 'group commit test' }),
      i % 2 === 0
        ? server.services.engine.transition(ctx, 'job', `job_missing_${i}`, { kind: 'phase', event: 'cancel' })
        : server.services.engine.transition(ctx, 'job', id, { kind: 'phase', event: 'return' }),
    ]);
    const settled = await Promise.allSettled(attempts);
    const ok = settled.filter((s) => s.status === 'fulfilled');
    const failed = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as DomainError] : []));
    expect(ok).toHaveLength(12);
    expect(failed.map((e) => e.status).toSorted()).toEqual([...Array(6).fill(404), ...Array(6).fill(409)]);
    const after = await written(ids);
    // One audit record and one event per job (the cancel; its stops' cascades are stop events), each job one version on.
    expect(after.audits).toBe(12);
    expect(after.events).toBe(12);
    expect(after.versions).toEqual(jobs.map((j) => j.version + 1));
  });

  it('answers a command only once its move is visible to other connections (after COMMIT)', async () => {
    const job = await createJob(acme.as.dispatcher);
    const applied = await server.services.engine.transition(ctx, 'job', job.id, { kind: 'phase', event: 'cancel' }, { cancellationNotes: 'visible' });
    expect(applied.to.phase).toBe('cancelled');
    const fresh = await acme.as.dispatcher.get<{ data: { phase: string; version: number } }>(`/api/job/${job.id}`);
    expect(fresh.body.data).toMatchObject({ phase: 'cancelled', version: job.version + 1 });
  });

  it('keeps every move of a stop when its job’s cancel (which queues the stop’s update for the COMMIT) and a move of the stop share a batch', async () => {
    for (const stopFirst of [true, false]) {
      const job = await createJob(acme.as.dispatcher);
      const stopId = job.stops[0]!.id;
      // Submitted in the same tick: one batch, both units running at once.
      const cancel = () => server.services.engine.transition(ctx, 'job', job.id, { kind: 'phase', event: 'cancel' }, { cancellationNotes: 'same batch' });
      const dispatch = () => server.services.engine.transition(ctx, 'stop', stopId, { kind: 'phase', event: 'dispatch' });
      const [first, second] = await Promise.allSettled(stopFirst ? [dispatch(), cancel()] : [cancel(), dispatch()]);
      const [stopMove, jobMove] = stopFirst ? [first!, second!] : [second!, first!];
      expect(jobMove.status).toBe('fulfilled');
      // The stop's own move either landed (before the cancel) or was refused: never a server error.
      expect(stopMove.status === 'fulfilled' ? 'moved' : (stopMove.reason as DomainError).status).toBeOneOf(['moved', 409]);
      const [row] = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
        em.execute<{ phase: string; version: number; audited: number[]; events: number[] }[]>(
          `select s.phase, s.version,
             (select array_agg((a.new_data->>'version')::int order by a.created_at, a.id) from audit_record a where a.entity_id = s.id and a.action = 'state_change') as audited,
             (select array_agg(o.entity_version order by o.seq) from outbox o where o.entity_id = s.id and o.event = 'stop:state_change') as events
           from stop s where s.id = ?`,
          [stopId],
        ),
      );
      // The cancel reached the stop, and each recorded move is a version of the row: none was written over.
      expect(row!.phase).toBe('cancelled');
      const versions = Array.from({ length: row!.version - 1 }, (_, i) => i + 2);
      expect(row!.audited.toSorted((a, b) => a - b)).toEqual(versions);
      expect(row!.events).toEqual(versions);
    }
  });

  it('keeps tenants apart: a batch bound to one site cannot move another site’s job', async () => {
    const globex = await createSiteFixture(server, 'globex');
    const theirs = await createJob(globex.as.dispatcher);
    await expect(server.services.engine.transition(ctx, 'job', theirs.id, { kind: 'phase', event: 'cancel' }, { cancellationNotes: 'x' })).rejects.toMatchObject({ status: 404 });
    const unchanged = await globex.as.dispatcher.get<{ data: { phase: string; version: number } }>(`/api/job/${theirs.id}`);
    expect(unchanged.body.data).toMatchObject({ phase: theirs.phase, version: theirs.version });
  });
});
