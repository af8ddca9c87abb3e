import { beforeAll, describe, expect, it } from 'vitest';
import { indexedDriverFacts } from '../../../engine/dispatch/driver-index.ts';
import { createPositionLogPruner } from '../../../engine/drivers/position-log-pruner.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { useTwoSites } from '../../support/two-sites.ts';
import { createDriver, createVehicle, type TestDriver } from '../../http/dispatch-fixtures.ts';

/**
 * Migration 0020: a position write leaves `change_xid` alone (so it can be a HOT update) and is logged once per
 * statement in `driver_position_change`; the dispatch driver index still sees every committed position, also after
 * the log was pruned past its snapshot (it reloads every driver then).
 */
const sites = useTwoSites({ RATE_LIMIT_POINTS: '100000' });
let ada: TestDriver;
let bob: TestDriver;

const PARIS = { lat: 48.8566, lng: 2.3522 };

beforeAll(async () => {
  const vehicle = await createVehicle(sites.acme);
  ada = await createDriver(sites.server, sites.acme, { name: 'Ada Log', at: PARIS, vehicleId: vehicle });
  bob = await createDriver(sites.server, sites.acme, { name: 'Bob Log', at: PARIS, vehicleId: vehicle });
}, 60_000);

const inAcme = <T>(work: Parameters<typeof inTenantScope<T>>[2]) => inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, work);
const positionOf = async (userId: string) => {
  const { drivers } = await inAcme((em) => indexedDriverFacts(em, sites.acme.site.id, {}));
  return drivers.find((d) => d.userId === userId)?.position ?? null;
};
const stampOf = (userId: string) =>
  inAcme(async (em) => (await em.execute<{ change_xid: string }[]>('select change_xid::text from driver_state where site_id = ? and user_id = ?', [sites.acme.site.id, userId]))[0]!.change_xid);
const fix = (lat: number, lng: number, at: number) => ({ lat, lng, recorded_at: new Date(at).toISOString() });

describe('driver position log (migration 0020)', () => {
  it('logs a position write instead of stamping the row, and the dispatch index sees it', async () => {
    expect(await positionOf(ada.id)).toEqual(PARIS);
    const stamp = await stampOf(ada.id);
    const [verdict] = await sites.server.services.locations.apply(sites.acme.site.id, ada.id, [fix(48.9, 2.4, Date.now())]);
    expect(verdict).toEqual({ accepted: true });
    expect(await stampOf(ada.id)).toBe(stamp);
    const logged = await inAcme((em) => em.execute<{ user_ids: string[] }[]>('select user_ids from driver_position_change where site_id = ?', [sites.acme.site.id]));
    expect(logged.some((row) => row.user_ids.includes(ada.id))).toBe(true);
    expect(await positionOf(ada.id)).toEqual({ lat: 48.9, lng: 2.4 });
    // Another site's log is not visible here, and its fixes write nothing of this site's.
    const globexLog = await inTenantScope(sites.server.services.db.orm, { siteId: sites.globex.site.id }, (em) => em.execute('select 1 from driver_position_change'));
    expect(globexLog).toEqual([]);
  });

  it('an availability write still stamps the row; a write that moves nobody logs nothing', async () => {
    const stamp = await stampOf(bob.id);
    expect((await bob.client.put('/api/driver/status', { availability: 'on_break' })).status).toBe(200);
    expect(BigInt(await stampOf(bob.id))).toBeGreaterThan(BigInt(stamp));
    const count = () => inAcme(async (em) => Number((await em.execute<{ n: string }[]>('select count(*) as n from driver_position_change'))[0]!.n));
    const before = await count();
    await inAcme((em) => em.execute('update driver_state set updated_at = now() where site_id = ? and user_id = ?', [sites.acme.site.id, bob.id]));
    expect(await count()).toBe(before);
  });

  it('prunes aged rows, records the horizon, and a reader older than it reloads every position', async () => {
    expect(await positionOf(bob.id)).toEqual(PARIS);
    // Bob moves (plain SQL, as another process would), then the log row ages out and is pruned.
    await inAcme((em) => em.execute('update driver_state set last_lat = ?, last_lng = ? where site_id = ? and user_id = ?', [47.5, 1.5, sites.acme.site.id, bob.id]));
    await inAcme((em) => em.execute("update driver_position_change set created_at = now() - interval '2 minutes' where site_id = ?", [sites.acme.site.id]));
    const newest = await inAcme(async (em) => (await em.execute<{ x: string }[]>('select max(change_xid)::text as x from driver_position_change'))[0]!.x);
    const pruner = createPositionLogPruner(sites.server.services.db.orm, sites.server.services.logger);
    pruner.committed(sites.acme.site.id);
    await pruner.close();
    const left = await inAcme((em) => em.execute('select 1 from driver_position_change'));
    expect(left).toEqual([]);
    const horizon = await inAcme((em) => em.execute<{ pruned_through: string }[]>('select pruned_through::text from driver_position_horizon where site_id = ?', [sites.acme.site.id]));
    expect(horizon).toEqual([{ pruned_through: newest }]);
    // The index's snapshot predates the pruned row: it cannot know Bob moved from the log, so it reads everyone.
    expect(await positionOf(bob.id)).toEqual({ lat: 47.5, lng: 1.5 });
    expect(await positionOf(ada.id)).toEqual({ lat: 48.9, lng: 2.4 });
  });
});
