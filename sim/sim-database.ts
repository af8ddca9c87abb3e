import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Client } from 'pg';
import { openDatabase } from '../persistence/database.ts';

/** Where Debian's PostgreSQL listens locally; a run's database is always on this machine. */
const SOCKET_DIRECTORY = '/var/run/postgresql';

/**
 * The local superuser (trust auth), only to create the role and the databases: `SIM_POSTGRES_ADMIN_URL` overrides.
 * Through the Unix socket when there is one (the run then connects the same way): every statement is a socket write,
 * and over TCP loopback those writes cost the simulator 5–14% more CPU and ~9% more wall time on a 2-core machine.
 */
export const DEFAULT_ADMIN_URL =
  process.env.SIM_POSTGRES_ADMIN_URL ??
  (existsSync(`${SOCKET_DIRECTORY}/.s.PGSQL.5432`) ? `postgres://postgres@${encodeURIComponent(SOCKET_DIRECTORY)}:5432/postgres` : 'postgres://postgres@127.0.0.1:5432/postgres');

/** Runs connect as a role without BYPASSRLS, so row-level security costs what it costs in production. */
const DEFAULT_APP_ROLE = 'dispatch_sim_app';

export type SimDatabase = { name: string; url: string; drop(): Promise<void> };

/** Tests pass their own migrated template and role; the CLI makes its own. */
export type SimDatabaseOptions = { adminUrl?: string; appRole?: string; template?: string };

async function asAdmin<T>(adminUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function urlOf(adminUrl: string, role: string, name: string): string {
  const url = new URL(adminUrl);
  url.username = role;
  url.password = '';
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Databases for a simulation: one migrated template per process, then a fresh clone per strategy run, so every
 * strategy starts from the same empty site (the round-robin cursor and the ids' order included).
 */
export class SimDatabases {
  private template: Promise<string> | null;
  private readonly ownsTemplate: boolean;
  private readonly adminUrl: string;
  private readonly role: string;

  constructor(options: SimDatabaseOptions = {}) {
    this.adminUrl = options.adminUrl ?? DEFAULT_ADMIN_URL;
    this.role = options.appRole ?? DEFAULT_APP_ROLE;
    this.template = options.template ? Promise.resolve(options.template) : null;
    this.ownsTemplate = !options.template;
  }

  private async createTemplate(): Promise<string> {
    const name = `dispatch_sim_tmpl_${randomBytes(4).toString('hex')}`;
    await asAdmin(this.adminUrl, async (client) => {
      const role = await client.query('select 1 from pg_roles where rolname = $1', [this.role]);
      if (role.rowCount === 0) await client.query(`create role ${this.role} login nosuperuser nobypassrls`);
      await client.query(`create database ${name} owner ${this.role}`);
    });
    const db = await openDatabase({ databaseUrl: urlOf(this.adminUrl, this.role, name), dataDir: '.data', poolSize: 1 });
    try {
      await db.migrate();
    } finally {
      await db.close();
    }
    return name;
  }

  async fresh(): Promise<SimDatabase> {
    this.template ??= this.createTemplate();
    const template = await this.template;
    const name = `dispatch_sim_${randomBytes(5).toString('hex')}`;
    await asAdmin(this.adminUrl, async (client) => {
      await client.query(`create database ${name} template ${template} owner ${this.role}`);
      // A run's database is thrown away afterwards: waiting for each commit's WAL flush would measure the disk, not
      // the engine (about 10 ms per commit on a busy machine against 1.5 ms). Results do not depend on it.
      await client.query(`alter database ${name} set synchronous_commit = off`);
    });
    return { name, url: urlOf(this.adminUrl, this.role, name), drop: () => this.drop(name) };
  }

  async close(): Promise<void> {
    if (!this.template || !this.ownsTemplate) return;
    const template = await this.template.catch(() => null);
    this.template = null;
    if (template) await this.drop(template);
  }

  private drop(name: string): Promise<void> {
    return asAdmin(this.adminUrl, (client) => client.query(`drop database if exists ${name} with (force)`)).then(() => undefined);
  }
}
