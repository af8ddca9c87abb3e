// Adds package-lock entries for platform-specific optional dependencies that the registry of this workplace does
// not serve (e.g. darwin and windows builds), so `npm ci` accepts the lockfile (npm/cli#9846). The entries carry the
// version and the optional flag only: npm skips them on platforms they do not match and never fetches them.
// Usage: npm ci --dry-run 2>&1 | node scripts/lock-unavailable-optionals.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const missing = [...new Set(readFileSync(0, 'utf8').match(/Missing: (.+?)@ from lock file/g) ?? [])]
  .map((line) => line.replace(/^Missing: /, '').replace(/@ from lock file$/, ''));
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
let added = 0;
for (const name of missing) {
  const parent = Object.entries(lock.packages).find(([, entry]) => entry.optionalDependencies?.[name]);
  if (!parent) throw new Error(`no package declares ${name} as optional`);
  const [, entry] = parent;
  lock.packages[`node_modules/${name}`] = {
    version: entry.optionalDependencies[name].replace(/^[\^~=]/, ''),
    ...(entry.dev ? { dev: true } : {}),
    optional: true,
  };
  added += 1;
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`added ${added} lock entries\n`);
