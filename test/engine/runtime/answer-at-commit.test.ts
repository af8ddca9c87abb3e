import type { EntityManager } from '@mikro-orm/postgresql';
import { describe, expect, it } from 'vitest';
import type { CommandContext } from '../../../engine/engine.ts';
import { AnswerAtCommit } from '../../../engine/runtime/answer-at-commit.ts';
import { deferWrite } from '../../../engine/runtime/deferred-writes.ts';
import { newId } from '../../../persistence/ids.ts';
import { appendOutbox } from '../../../persistence/outbox.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { useOneSite } from '../../support/one-site.ts';
import { recording, transactionWith } from '../../support/pg-recording.ts';
import { sessionState } from '../../support/session-state.ts';

/**
 * `engine.command` work that answers with an `AnswerAtCommit`: the read goes out with the COMMIT (no round trip of
 * its own), sees the command's writes, and a read that fails rolls the whole command back.
 */
const site = useOneSite();
const ctx = (): CommandContext => ({ siteId: site.acme.site.id, actor: { userId: site.acme.users.dispatcher.id, applicationId: null, requestId: null, role: 'dispatcher' } });

/** An outbox row written through the ORM's unit of work and flushed; returns its entity id. */
async function probeEvent(em: EntityManager): Promise<string> {
  const entityId = newId('job');
  appendOutbox(em, { siteId: site.acme.site.id, event: 'probe:written', entityType: 'probe', entityId, entityVersion: null, data: {}, timestamp: new Date() });
  await em.flush();
  return entityId;
}

const COUNT = 'select count(*)::int as n from outbox where entity_id = ?';
const committedCount = async (entityId: string): Promise<number> =>
  (await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) => em.execute<{ n: number }[]>(COUNT, [entityId])))[0]!.n;

describe('a command answered by a read sent with its COMMIT', () => {
  it("answers from the command's own writes, committed, with the read in the COMMIT's round trip", async () => {
    let answer = { id: '', n: 0 };
    const sent = await recording(async () => {
      answer = await site.server.services.engine.command(ctx(), 'probe:at-commit', async (scope) => {
        const id = await probeEvent(scope.em);
        return new AnswerAtCommit(COUNT, [id], async (rows) => ({ id, n: Number(rows[0]!.n) }));
      });
    });
    expect(answer.n).toBe(1);
    expect(await committedCount(answer.id)).toBe(1);
    // Two round trips: the BEGIN with the flushed write, then the read with the COMMIT.
    const transaction = transactionWith(sent, answer.id);
    expect(transaction).toHaveLength(2);
    expect(transaction[1]).toMatch(/^(select count\(\*\)::int as n from outbox where entity_id = '[^']+'|execute engine_stmt_\d+\('[^']+'\)); commit$/);
  });

  it('rolls the command back when its read fails, with what was queued for the COMMIT, and ends its transaction', async () => {
    let id = '';
    let backend = 0;
    const horizon = () =>
      inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) => em.execute('select 1 from driver_position_horizon where site_id = ?', [site.acme.site.id]));
    await expect(
      site.server.services.engine.command(ctx(), 'probe:failing', async (scope) => {
        id = await probeEvent(scope.em);
        backend = (await scope.em.execute<{ pid: number }[]>('select pg_backend_pid() as pid'))[0]!.pid;
        // A write queued to go out with the COMMIT, in front of the read.
        expect(deferWrite(scope.em, "insert into driver_position_horizon (site_id, pruned_through) values (?, '1')", [site.acme.site.id])).toBe(true);
        return new AnswerAtCommit('select 1 / (count(*)::int - 1) as n from outbox where entity_id = ?', [id], async (rows) => rows[0]!.n);
      }),
    ).rejects.toThrow(/division by zero/);
    expect(await committedCount(id)).toBe(0);
    expect(await horizon()).toEqual([]);
    // Rolled back, not left aborted (the pool may have handed the session to someone else since).
    expect(await sessionState(site.server.databaseUrl, backend)).not.toMatch(/aborted/);
  });

  it('maps the answer once committed', async () => {
    const answer = await site.server.services.engine.command(ctx(), 'probe:map', async (scope) => {
      const id = await probeEvent(scope.em);
      return new AnswerAtCommit(COUNT, [id], async (rows) => Number(rows[0]!.n)).map((n) => `${n} written`);
    });
    expect(answer).toBe('1 written');
  });
});
