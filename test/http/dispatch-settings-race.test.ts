import { Client } from 'pg';
import { expect, it } from 'vitest';
import { useOneSite } from '../support/one-site.ts';
import { urlFor } from '../support/postgres.ts';
import { waitFor } from '../support/wait-for.ts';

/**
 * Two staff members change different dispatch settings at the same moment: each PUT names one field, and both
 * changes stay. The test makes both requests read the settings before either writes, behind a lock it holds.
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });

type Settings = { strategy: string; auto_dispatch: boolean };

it('two concurrent PUT /dispatch/settings with different fields: both are kept', async () => {
  // The site's first settings: the field not given keeps its default.
  const first = await site.acme.as.admin.put<{ data: Settings }>('/api/dispatch/settings', { auto_dispatch: false });
  expect([first.status, first.body.data.strategy]).toEqual([200, 'load-balanced']);
  const locker = new Client({ connectionString: urlFor(site.server.database, 'postgres') });
  await locker.connect();
  try {
    await locker.query('begin');
    await locker.query('lock table dispatch_settings in share row exclusive mode');
    const changes = Promise.all([
      site.acme.as.admin.put('/api/dispatch/settings', { strategy: 'zone-based' }),
      site.acme.as.dispatcher.put('/api/dispatch/settings', { auto_dispatch: true }),
    ]);
    await waitFor('both changes waiting on a lock', async () => {
      const waiting = await locker.query("select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'", [site.server.database]);
      return waiting.rows[0].n >= 2;
    }, 10_000);
    await locker.query('commit');
    expect((await changes).map((answer) => answer.status)).toEqual([200, 200]);
    const settings = (await site.acme.as.dispatcher.get<{ data: Settings }>('/api/dispatch/settings')).body.data;
    expect(settings).toMatchObject({ strategy: 'zone-based', auto_dispatch: true });
  } finally {
    await locker.query('rollback').catch(() => undefined);
    await locker.end();
  }
}, 60_000);
