import { beforeAll, describe, expect, it } from 'vitest';
import { useOneSite } from '../../support/one-site.ts';
import { recording, type Sent } from '../../support/pg-recording.ts';
import { createDriver, createTeam, createVehicle, jobAt } from '../../http/dispatch-fixtures.ts';

/**
 * What a team dispatch costs in round trips to PostgreSQL, as the dispatcher waits for them: the BEGIN travels with
 * the head read (the job, the driver index's changes and the team check), the answer's job and route read (one
 * statement) is another, and the audit + outbox go with the COMMIT. The dispatch's own write (the driver-day lock
 * and the write statement, planned from the route this process remembers for the driver's day) has no round trip of
 * its own: it goes out in front of the next statement, here the read for the answer. Three in all (four while the
 * team check had a statement of its own, five while the answer read the route in a statement of its own, six before
 * the write was planned from memory), none of them a BEGIN of its own.
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });
let team: string;

const PARIS = { lat: 48.8566, lng: 2.3522 };

beforeAll(async () => {
  team = await createTeam(site.acme, 'Round trips');
  const vehicleId = await createVehicle(site.acme);
  for (const name of ['Near Ned', 'Far Fay']) await createDriver(site.server, site.acme, { name, at: PARIS, vehicleId, teamIds: [team] });
}, 60_000);

/** A PREPARE for later dispatches on a new connection (in a round trip of its own, which may carry the BEGIN). */
const isPrepare = (text: string) => /^(begin; [^]*?; )?prepare /.test(text);

/** The dispatch's transaction: the queries on the connection that read the head, from its BEGIN to its COMMIT, PREPAREs left out; and whether it began with the head read or a PREPARE. */
function dispatchTransaction(sent: Sent[]): { texts: string[]; beganWith: string } {
  const head = sent.findIndex((s) => s.text.includes('execute dispatch_site_head_job'));
  expect(head).toBeGreaterThanOrEqual(0);
  const own = sent.filter((s) => s.connection === sent[head]!.connection).map((s) => s.text);
  const at = own.indexOf(sent[head]!.text);
  const begin = own.findLastIndex((text, i) => i <= at && text.startsWith('begin'));
  const commit = own.findIndex((text, i) => i >= at && /\bcommit;?$/.test(text));
  const texts = own.slice(begin, commit + 1);
  return { texts: texts.filter((text) => !isPrepare(text)), beganWith: texts[0]! };
}

describe('a team dispatch', () => {
  it('sends its BEGIN and team check with its head read, its write with the next statement and its audit and outbox with the COMMIT: three round trips', async () => {
    for (let round = 0; round < 3; round++) {
      const job = await jobAt(site.acme.as.dispatcher, PARIS);
      let status = 0;
      const sent = await recording(async () => {
        status = (await site.acme.as.dispatcher.post('/api/dispatch/team/job', { job_id: job.id, team_id: team })).status;
      });
      expect(status).toBe(200);
      // The first dispatch of the site in this process reads the whole fleet unprepared; the next ones are counted.
      if (round === 0) continue;
      const { texts: transaction, beganWith } = dispatchTransaction(sent);
      expect(beganWith).toMatch(/^begin; select set_config\('app\.site_id'/);
      expect(transaction[0]).toContain('execute dispatch_site_head_job_v5(');
      expect(isPrepare(beganWith) || transaction[0] === beganWith).toBe(true);
      expect(transaction.filter((text) => /^begin;?$/.test(text))).toEqual([]);
      expect(transaction.filter((text) => /from team where/.test(text))).toEqual([]);
      expect(transaction).toHaveLength(3);
      const withLock = transaction.filter((text) => text.includes('pg_advisory_xact_lock(hashtext(\'route:'));
      expect(withLock).toHaveLength(1);
      // The lock and the planned write, then the job and route read for the answer (prepared once the session has sent it), in one round trip.
      expect(withLock[0]).toMatch(/^select pg_advisory_xact_lock\(hashtext\('route:[^]*; execute dispatch_driver_day_planned_v4\([^]*; (select j\.\*, [^]*to_jsonb\(r\) from route r|execute engine_stmt_\d+\('rte_[^']*', '[^']*', 'job_)/);
      // The audit records and outbox rows, as their statement or (once this session prepared it) its execute.
      expect(transaction.at(-1)).toMatch(/^(with audit as \(\s*insert into audit_record |execute engine_stmt_\d+\('[^']*', '\[\{"id":"aud_)[^]*"obx_[^]*; commit;?$/);
    }
  });
});
