import { beforeAll, describe, expect, it } from 'vitest';
import { useOneSite } from '../../support/one-site.ts';
import { recording, type Sent } from '../../support/pg-recording.ts';
import { createDriver, createTeam, createVehicle, jobAt } from '../../http/dispatch-fixtures.ts';

/**
 * What a team dispatch costs in round trips to PostgreSQL, as the dispatcher waits for them: the BEGIN and the team
 * check (`dispatch_team_holds`, which raises when the team is not the site's) travel with the head read (the job and
 * the driver index's changes), and everything else with the COMMIT: the dispatch's own write (the driver-day lock and
 * the write statement, planned from the route this process remembers for the driver's day), the audit + outbox, and
 * the answer's job and route read (one statement, inside the transaction, after them). Two in all (three while the
 * answer was read before the COMMIT, four while the team check was a read of its own, five while the answer read the
 * route in a statement of its own, six before the write was planned from memory), none of them a BEGIN of its own.
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });
let team: string;
let loadedTeam: string;

const PARIS = { lat: 48.8566, lng: 2.3522 };

beforeAll(async () => {
  team = await createTeam(site.acme, 'Round trips');
  const vehicleId = await createVehicle(site.acme);
  for (const name of ['Near Ned', 'Far Fay']) await createDriver(site.server, site.acme, { name, at: PARIS, vehicleId, teamIds: [team] });
  loadedTeam = await createTeam(site.acme, 'Round trips with a max_load');
  await createDriver(site.server, site.acme, { name: 'Capped Cal', at: PARIS, vehicleId, teamIds: [loadedTeam], maxLoad: 100 });
}, 60_000);

/**
 * The dispatch's transaction: the queries on the connection that read the head, from its BEGIN to its COMMIT. A PREPARE
 * for later dispatches on a new connection is left out, and whatever was queued to go with it (the BEGIN, the team
 * check) is counted with the query after it, where it goes on a connection that has the statement prepared.
 */
function dispatchTransaction(sent: Sent[]): string[] {
  const head = sent.findIndex((s) => s.text.includes('execute dispatch_site_head_job'));
  expect(head).toBeGreaterThanOrEqual(0);
  const own: string[] = [];
  let carried: string[] = [];
  for (const { text } of sent.filter((s) => s.connection === sent[head]!.connection)) {
    const prepare = text.startsWith('prepare ') ? 0 : text.indexOf('; prepare ');
    if (prepare >= 0) {
      if (prepare > 0) carried.push(text.slice(0, prepare));
      continue;
    }
    own.push([...carried, text].join('; '));
    carried = [];
  }
  const at = own.findIndex((text) => text.includes('execute dispatch_site_head_job'));
  const begin = own.findLastIndex((text, i) => i <= at && text.startsWith('begin'));
  const commit = own.findIndex((text, i) => i >= at && /\bcommit;?$/.test(text));
  return own.slice(begin, commit + 1);
}

describe('a team dispatch', () => {
  it('sends its BEGIN and team check with its head read, and its write, audit, outbox and answer read with the COMMIT: two round trips', async () => {
    for (let round = 0; round < 3; round++) {
      const job = await jobAt(site.acme.as.dispatcher, PARIS);
      let status = 0;
      const sent = await recording(async () => {
        status = (await site.acme.as.dispatcher.post('/api/dispatch/team/job', { job_id: job.id, team_id: team })).status;
      });
      expect(status).toBe(200);
      // The first dispatch of the site in this process reads the whole fleet unprepared; the next ones are counted.
      if (round === 0) continue;
      const transaction = dispatchTransaction(sent);
      // The head read first: the BEGIN and tenant settings, the team check, one select of plan settings, the EXECUTE, the settings put back.
      expect(transaction[0]).toMatch(/^begin; select set_config\('app\.site_id'[^;]*; (select dispatch_team_holds|execute engine_stmt_\d+)\('team_[^']*', 'site_[^']*'\); select set_config\([^;]*set_config\('enable_seqscan', 'off', true\); execute dispatch_site_head_job_v\d+\([^;]*; select set_config\('plan_cache_mode'[^;]*$/);
      expect(transaction.filter((text) => text.includes('execute dispatch_site_head_job_v'))).toHaveLength(1);
      expect(transaction.filter((text) => /^begin;?$/.test(text))).toEqual([]);
      expect(transaction).toHaveLength(2);
      expect(transaction.filter((text) => text.includes("pg_advisory_xact_lock(hashtext('route:"))).toHaveLength(1);
      // A driver without a max_load costs no load check.
      expect(transaction.filter((text) => /dispatch_load_holds|execute engine_stmt_\d+\('site_[^']*', 'usr_[^']*', 'job_/.test(text))).toEqual([]);
      // The lock with the plan settings in one select, the planned write, the audit records and outbox rows (as their
      // statement or, once this session prepared it, its execute), the job and route read for the answer, the COMMIT.
      expect(transaction[1]).toMatch(
        /^select pg_advisory_xact_lock\(hashtext\('route:[^;]*\), set_config\('dispatch\.plan_cache_mode'[^;]*; execute dispatch_driver_day_planned_v4\([^]*; (with audit as \(\s*insert into audit_record |execute engine_stmt_\d+\('[^']*', '\[\{"id":"aud_)[^]*"obx_[^]*; (select j\.\*, [^;]*to_jsonb\(r\) from route r[^;]*|execute engine_stmt_\d+\('rte_[^']*', '[^']*', 'job_[^;]*); commit;?$/,
      );
    }
  });

  it("to a driver with a max_load, checks the driver's open jobs under their lock with the write: still two round trips", async () => {
    for (let round = 0; round < 3; round++) {
      const job = await jobAt(site.acme.as.dispatcher, PARIS);
      let status = 0;
      const sent = await recording(async () => {
        status = (await site.acme.as.dispatcher.post('/api/dispatch/team/job', { job_id: job.id, team_id: loadedTeam })).status;
      });
      expect(status).toBe(200);
      if (round === 0) continue;
      const transaction = dispatchTransaction(sent);
      expect(transaction).toHaveLength(2);
      // The check (inlined the first time on a connection, then as its prepared statement) goes first with the write, before the driver-day lock.
      expect(transaction[1]).toMatch(/^(select dispatch_load_holds\('site_[^']*', 'usr_[^']*', 'job_[^']*'\)|execute engine_stmt_\d+\('site_[^']*', 'usr_[^']*', 'job_[^']*'\)); select pg_advisory_xact_lock\(hashtext\('route:/);
    }
  });
});
