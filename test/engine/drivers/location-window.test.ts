import { beforeAll, describe, expect, it } from 'vitest';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { useTwoSites } from '../../support/two-sites.ts';
import { createDriver, createVehicle, type TestDriver } from '../../http/dispatch-fixtures.ts';

/**
 * The location tracker's window: fixes arriving together share one statement (one `driver_position_change` row per
 * statement, migration 0020), while a fix that arrives into silence goes out at once instead of waiting for company.
 */
const sites = useTwoSites({ RATE_LIMIT_POINTS: '100000' });
const drivers: TestDriver[] = [];
const PARIS = { lat: 48.8566, lng: 2.3522 };

beforeAll(async () => {
  const vehicle = await createVehicle(sites.acme);
  for (const name of ['Ada Window', 'Bob Window', 'Cy Window']) drivers.push(await createDriver(sites.server, sites.acme, { name, at: PARIS, vehicleId: vehicle }));
}, 60_000);

const loggedStatements = () =>
  inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, (em) =>
    em.execute<{ user_ids: string[] }[]>('select user_ids from driver_position_change where site_id = ? order by change_xid', [sites.acme.site.id]),
  );

describe('location tracker window', () => {
  it('sends a fix arriving into silence at once, and batches the fixes that arrive while it is out', async () => {
    const [ada, bob, cy] = drivers as [TestDriver, TestDriver, TestDriver];
    const before = (await loggedStatements()).length;
    await new Promise((resolve) => setTimeout(resolve, 10));
    const at = new Date().toISOString();
    const { locations } = sites.server.services;
    const siteId = sites.acme.site.id;
    const answers = await Promise.all([
      locations.apply(siteId, ada.id, [{ lat: 48.86, lng: 2.35, recorded_at: at }]),
      locations.apply(siteId, bob.id, [{ lat: 48.87, lng: 2.36, recorded_at: at }]),
      locations.apply(siteId, cy.id, [{ lat: 48.88, lng: 2.37, recorded_at: at }]),
    ]);
    expect(answers).toEqual([[{ accepted: true }], [{ accepted: true }], [{ accepted: true }]]);
    const statements = (await loggedStatements()).slice(before).map((row) => [...row.user_ids].sort());
    // In either order: the lone fix's transaction and the pair's may take their ids either way round.
    expect(statements).toHaveLength(2);
    expect(statements).toEqual(expect.arrayContaining([[ada.id], [bob.id, cy.id].sort()]));
  });
});
