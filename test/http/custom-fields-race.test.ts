import { Client } from 'pg';
import { beforeAll, expect, it } from 'vitest';
import { useOneSite } from '../support/one-site.ts';
import { urlFor } from '../support/postgres.ts';
import { waitFor } from '../support/wait-for.ts';
import { createDriver } from './dispatch-fixtures.ts';

/**
 * Two staff members set different custom fields of the same worker (or customer) at the same moment: an update
 * merges the keys it names into the stored values, so each must read the values the other wrote. The test lines the
 * two requests up behind a lock it holds on the table, once both have begun.
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });

type WithFields = { custom_fields: Record<string, unknown> };

beforeAll(async () => {
  for (const entity of ['worker', 'customer']) {
    for (const key of ['badge', 'locker']) {
      const made = await site.acme.as.admin.post('/api/customfield', { entity_type: entity, key, label: key, data_type: 'text' });
      if (made.status !== 201) throw new Error(`custom field failed: ${made.status} ${made.text}`);
    }
  }
}, 60_000);

/** Sends both changes while the test holds `table` locked against writes, released once both wait on a lock. */
async function bothAtOnce(table: string, changes: () => Promise<{ status: number }[]>): Promise<number[]> {
  const locker = new Client({ connectionString: urlFor(site.server.database, 'postgres') });
  await locker.connect();
  try {
    await locker.query('begin');
    await locker.query(`lock table ${table} in share row exclusive mode`);
    const answers = changes();
    await waitFor('both changes waiting on a lock', async () => {
      const waiting = await locker.query("select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'", [site.server.database]);
      return waiting.rows[0].n >= 2;
    }, 10_000);
    await locker.query('commit');
    return (await answers).map((answer) => answer.status);
  } finally {
    await locker.query('rollback').catch(() => undefined);
    await locker.end();
  }
}

it('two concurrent PUT /worker setting different custom fields: both values are kept', async () => {
  const driver = await createDriver(site.server, site.acme, { name: 'Field Fay' });
  const statuses = await bothAtOnce('worker', () =>
    Promise.all([
      site.acme.as.admin.put('/api/worker', { id: driver.id, custom_fields: { badge: 'B-7' } }),
      site.acme.as.dispatcher.put('/api/worker', { id: driver.id, custom_fields: { locker: 'L-12' } }),
    ]),
  );
  expect(statuses).toEqual([200, 200]);
  const worker = (await site.acme.as.admin.get<{ data: WithFields }>(`/api/worker?id=${driver.id}`)).body.data;
  expect(worker.custom_fields).toEqual({ badge: 'B-7', locker: 'L-12' });
});

it('two concurrent PUT /customer setting different custom fields: both values are kept', async () => {
  const created = await site.acme.as.dispatcher.post<{ data: { id: string } }>('/api/customer', { email: 'fields@example.com' });
  expect(created.status).toBe(201);
  const id = created.body.data.id;
  const statuses = await bothAtOnce('user_profile', () =>
    Promise.all([
      site.acme.as.admin.put('/api/customer', { id, custom_fields: { badge: 'gold' } }),
      site.acme.as.dispatcher.put('/api/customer', { id, custom_fields: { locker: 'north' } }),
    ]),
  );
  expect(statuses).toEqual([200, 200]);
  const customer = (await site.acme.as.admin.get<{ data: WithFields }>(`/api/customer?id=${id}`)).body.data;
  expect(customer.custom_fields).toEqual({ badge: 'gold', locker: 'north' });
});
