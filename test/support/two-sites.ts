import { beforeAll } from 'vitest';
import { createSiteFixture, type SiteFixture } from './fixtures.ts';
import { useOneSite, type OneSite } from './one-site.ts';

export type TwoSites = OneSite & { globex: SiteFixture };

type ServerEnv = Record<string, string>;

/**
 * The usual world of a test file: a test server with two sites, `acme` and `globex` (so every file can check that one
 * site never sees the other). Registers a `beforeAll` that starts them and an `afterAll` that closes the server, in the
 * file or `describe` block that calls it; the returned object's fields are filled once that `beforeAll` has run, so
 * read them in hooks and tests only. `env` may be a function when a setting is known only then (a temporary folder).
 * Hooks the caller registers later run after this `beforeAll` and before this `afterAll`.
 */
export function useTwoSites(env: ServerEnv | (() => Promise<ServerEnv>) = {}): TwoSites {
  const sites = useOneSite(env) as TwoSites;
  beforeAll(async () => {
    sites.globex = await createSiteFixture(sites.server, 'globex');
  });
  return sites;
}
