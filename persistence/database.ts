import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { ALL_ENTITIES } from './entities/all-entities.ts';
import { MIGRATIONS } from './migrations/migration-list.ts';

export type DatabaseOptions = {
  /** PostgreSQL URL; absent means embedded PGlite under `dataDir`. */
  databaseUrl: string | undefined;
  dataDir: string;
  poolSize: number;
};

export type Database = {
  orm: MikroORM;
  kind: 'postgres' | 'pglite';
  /** Applies the checked-in migrations that have not run yet; returns their names. */
  migrate(): Promise<string[]>;
  close(): Promise<void>;
};

/**
 * Opens the database: PostgreSQL when a URL is given, otherwise an embedded PGlite in `dataDir/pglite`, served
 * over a loopback socket so the same `pg` driver talks to both. PGlite is one session: the pool has one connection.
 */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const orm = await initOrm(options.databaseUrl, options.poolSize);
    return wrap(orm, 'postgres', async () => {});
  }
  const dir = path.join(options.dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  const pglite = await PGlite.create(dir);
  const port = await freeLoopbackPort();
  const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port });
  await server.start();
  const orm = await initOrm(`postgres://postgres@127.0.0.1:${port}/postgres`, 1);
  return wrap(orm, 'pglite', async () => {
    await server.stop();
    await pglite.close();
  });
}

async function initOrm(clientUrl: string, poolSize: number): Promise<MikroORM> {
  return MikroORM.init({
    clientUrl,
    entities: ALL_ENTITIES,
    extensions: [Migrator],
    pool: { min: 0, max: poolSize },
    migrations: { migrationsList: MIGRATIONS, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    schemaGenerator: { ignoreSchema: ['bullmq'] },
    allowGlobalContext: false,
    debug: false,
  });
}

function wrap(orm: MikroORM, kind: Database['kind'], closeEngine: () => Promise<void>): Database {
  return {
    orm,
    kind,
    async migrate() {
      const done = await orm.getMigrator().up();
      return done.map((m) => m.name);
    },
    async close() {
      await orm.close(true);
      await closeEngine();
    },
  };
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
