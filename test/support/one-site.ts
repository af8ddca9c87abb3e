import { afterAll, beforeAll } from 'vitest';
import { createSiteFixture, type SiteFixture } from './fixtures.ts';
import { startTestServer, type TestServer } from './test-server.ts';

export type OneSite = { server: TestServer; acme: SiteFixture };

type ServerEnv = Record<string, string>;

/**
 * A test server with one site, `acme`, for files that look at one site's internals (statements, plans, rows) rather
 * than at what crosses sites (`useTwoSites` adds `globex` on top of this). Registers a `beforeAll` that starts them
 * and an `afterAll` that closes the server; the returned object's fields are filled once that `beforeAll` has run, so
 * read them in hooks and tests only. `env` may be a function when a setting is known only then (a temporary folder).
 */
export function useOneSite(env: ServerEnv | (() => Promise<ServerEnv>) = {}): OneSite {
  const site = {} as OneSite;
  beforeAll(async () => {
    site.server = await startTestServer(typeof env === 'function' ? await env() : env);
    site.acme = await createSiteFixture(site.server, 'acme');
  });
  afterAll(() => site.server.close());
  return site;
}
