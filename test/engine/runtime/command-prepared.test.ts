import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inCommandTransaction, StalePlanError } from '../../../engine/runtime/command-transaction.ts';
import { tenantRead } from '../../../engine/runtime/tenant-read.ts';
import { createSiteFixture, type SiteFixture } from '../../support/fixtures.ts';
import { recording } from '../../support/pg-recording.ts';
import { startTestServer, type TestServer } from '../../support/test-server.ts';

let server: TestServer;
let acme: SiteFixture;

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  // Scratch tables without row-level security, read by the commands and the tenant reads below.
  await server.services.db.orm.em.getConnection().execute(`create table command_probe (id text primary key, value int not null); insert into command_probe values ('a', 1)`);
  await server.services.db.orm.em.getConnection().execute(`create table read_probe (id text primary key, value int not null); insert into read_probe values ('a', 1)`);
});
afterAll(() => server.close());

type Seen = { backend: number; prepared: boolean; columns: string[]; sent: string[] };

/** The texts `work` sends to PostgreSQL (PREPARE and DEALLOCATE, sent after the transaction, left out). */
async function sentDuring<T>(work: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  const prototype = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const sent: string[] = [];
  prototype.query = function (this: unknown, ...args: unknown[]) {
    const config = args[0] as string | { text?: string };
    const text = typeof config === 'string' ? config : (config.text ?? '');
    if (!/^(prepare|deallocate) /.test(text)) sent.push(text);
    return original.apply(this, args);
  };
  try {
    return { result: await work(), sent };
  } finally {
    prototype.query = original;
  }
}

/** One command's transaction that reports its session, whether its read is prepared there, the columns it read, and what it sent. */
const readCommand = async (): Promise<Seen> => {
  const { result, sent } = await sentDuring(() => readInCommand());
  return { ...result, sent };
};

const readInCommand = () =>
  inCommandTransaction<Omit<Seen, 'sent'>>(server.services.db.orm, { siteId: acme.site.id, userId: acme.users.dispatcher.id }, async (em) => {
    const [session] = await em.execute<{ backend: number; prepared: boolean }[]>(
      `select pg_backend_pid() as backend, exists (select 1 from pg_prepared_statements where statement like '%from command_probe where id = $1') as prepared`,
    );
    const [row] = await em.execute<Record<string, unknown>[]>('select * from command_probe where id = ?', ['a']);
    return { value: { ...session!, columns: Object.keys(row!) }, last: null };
  });

describe("a command's own transaction", () => {
  it('runs a statement its session sent before as a prepared statement, and after a schema change runs again instead of failing', async () => {
    const before: Seen[] = [];
    for (let i = 0; i < 12; i += 1) before.push(await readCommand());
    // A session that already ran the statement in an earlier command has it prepared.
    const repeated = before.filter((s, i) => before.slice(0, i).some((earlier) => earlier.backend === s.backend));
    expect(repeated.length).toBeGreaterThan(0);
    expect(repeated.every((s) => s.prepared)).toBe(true);
    // ...and runs it as `execute`, its values no longer written into the text.
    expect(repeated.every((s) => s.sent.some((text) => /execute engine_stmt_\d+\('a'\)/.test(text)))).toBe(true);
    expect(repeated.some((s) => s.sent.some((text) => text.includes("from command_probe where id = 'a'")))).toBe(false);
    // The first run on a session sends it inlined.
    expect(before[0]!.sent.some((text) => text.includes("from command_probe where id = 'a'"))).toBe(true);

    // `select *` planned before a column was added cannot run any more ("cached plan must not change result type"):
    // the command fails as a stale plan (the engine runs such a command again, as after a version race) and the
    // session's statements are dropped, so the same command run again reads the new column.
    await server.services.db.orm.em.getConnection().execute('alter table command_probe add column note text');
    const failures: unknown[] = [];
    for (let i = 0; i < 12; i += 1) {
      const seen = await readCommand().catch(async (error: unknown) => (failures.push(error), readCommand()));
      expect(seen.columns).toContain('note');
    }
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.every((error) => error instanceof StalePlanError)).toBe(true);
  });
});

/** One tenant read of the scratch table, as the API's reads go (`ctx.read`). */
const read = () => tenantRead(server.services.db.orm, { siteId: acme.site.id, userId: acme.users.dispatcher.id })('select * from read_probe where id = ?', ['a']);

describe('a tenant read (tenantRead)', () => {
  it('goes in one query from BEGIN to COMMIT, prepared once its session sent it, and after a schema change reads again instead of failing', async () => {
    const sent = await recording(async () => {
      for (let i = 0; i < 12; i += 1) expect(await read()).toEqual([{ id: 'a', value: 1 }]);
    });
    const reads = sent.filter((query) => !query.text.startsWith('prepare ') && (query.text.includes('read_probe') || /execute engine_stmt_\d+\('a'\)/.test(query.text)));
    expect(reads).toHaveLength(12);
    expect(reads.every((query) => /^begin;.*; commit$/s.test(query.text))).toBe(true);
    expect(reads.some((query) => /execute engine_stmt_\d+\('a'\)/.test(query.text))).toBe(true);

    // On each session that prepared it, the read fails once as a stale plan and runs again inline: the caller sees
    // the new column, never the error.
    await server.services.db.orm.em.getConnection().execute('alter table read_probe add column note text');
    for (let i = 0; i < 12; i += 1) expect(await read()).toEqual([{ id: 'a', value: 1, note: null }]);
  });
});
