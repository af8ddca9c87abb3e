import { afterAll, beforeAll, expect, it } from 'vitest';
import { tenantRead } from '../../../engine/runtime/tenant-read.ts';
import { createSiteFixture, type SiteFixture } from '../../support/fixtures.ts';
import { recording } from '../../support/pg-recording.ts';
import { startTestServer, type TestServer } from '../../support/test-server.ts';

let server: TestServer;
let acme: SiteFixture;

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  // A scratch table without row-level security, read below.
  await server.services.db.orm.em.getConnection().execute(`create table read_probe (id text primary key, value int not null); insert into read_probe values ('a', 1)`);
});
afterAll(() => server.close());

const read = () => tenantRead(server.services.db.orm, { siteId: acme.site.id, userId: acme.users.dispatcher.id })('select * from read_probe where id = ?', ['a']);

it('reads in one query from BEGIN to COMMIT, prepared once its session sent it, and after a schema change reads again instead of failing', async () => {
  const sent = await recording(async () => {
    for (let i = 0; i < 12; i += 1) expect(await read()).toEqual([{ id: 'a', value: 1 }]);
  });
  const reads = sent.filter((query) => query.text.includes('read_probe') || /execute engine_stmt_\d+\('a'\)/.test(query.text)).filter((query) => !query.text.startsWith('prepare '));
  expect(reads).toHaveLength(12);
  expect(reads.every((query) => /^begin;.*; commit$/s.test(query.text))).toBe(true);
  expect(reads.some((query) => /execute engine_stmt_\d+\('a'\)/.test(query.text))).toBe(true);

  // `select *` planned before a column was added cannot run any more ("cached plan must not change result type"): on
  // each session that prepared it, the read fails once and runs again inline, and the caller sees the new column.
  await server.services.db.orm.em.getConnection().execute('alter table read_probe add column note text');
  for (let i = 0; i < 12; i += 1) expect(await read()).toEqual([{ id: 'a', value: 1, note: null }]);
});
