import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroupCommit, type Unit } from '../../../engine/runtime/group-commit.ts';
import { createSiteFixture, type SiteFixture } from '../../support/fixtures.ts';
import { startTestServer, type TestServer } from '../../support/test-server.ts';

let server: TestServer;
let acme: SiteFixture;

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
});
afterAll(() => server.close());

type Em = Parameters<Unit<unknown>['work']>[0];

/** The transaction a unit ran in. */
const transactionId = async (em: Em): Promise<string> => {
  const [row] = await em.execute<{ tx: string }[]>('select txid_current()::text as tx');
  return row!.tx;
};

/** A group commit of two slots that records each committed batch's size. */
function recordingGroupCommit(pipeline: boolean): { groupCommit: GroupCommit<string>; batchSizes: number[] } {
  const batchSizes: number[] = [];
  const groupCommit = new GroupCommit<string>({
    orm: server.services.db.orm,
    maxConcurrent: 2,
    pipeline,
    commitStatement: (values) => (batchSizes.push(values.length), null),
  });
  return { groupCommit, batchSizes };
}

const run = (groupCommit: GroupCommit<string>, work: (em: Em) => Promise<string>) =>
  groupCommit.run({ siteId: acme.site.id, userId: acme.users.admin.id, work });

describe('group commit slots (units that waited are spread over the free transactions)', () => {
  it.each([true, false])('splits units that arrive together over both free slots (pipelined: %s)', async (pipeline) => {
    const { groupCommit, batchSizes } = recordingGroupCommit(pipeline);
    const transactions = await Promise.all(Array.from({ length: 8 }, () => run(groupCommit, transactionId)));
    expect(batchSizes).toEqual([4, 4]);
    expect(new Set(transactions).size).toBe(2);
  });

  it('gives every unit that waited to the one slot that is free while the other batch runs', async () => {
    const { groupCommit, batchSizes } = recordingGroupCommit(true);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = run(groupCommit, async (em) => {
      await held;
      return transactionId(em);
    });
    // The slow unit's batch has started (a turn of the event loop) before the others arrive.
    await new Promise((resolve) => setImmediate(resolve));
    const others = await Promise.all(Array.from({ length: 6 }, () => run(groupCommit, transactionId)));
    release();
    const slowTransaction = await slow;
    expect(batchSizes).toEqual([6, 1]);
    expect(new Set(others).size).toBe(1);
    expect(others).not.toContain(slowTransaction);
  });
});
