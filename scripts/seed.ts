import { loadConfig } from '../app/config.ts';
import { printCredentials, seedDemo } from '../app/seed-demo.ts';
import { createServices } from '../app/services.ts';

/**
 * `npm run seed [-- --json]`: creates the demo data if missing and prints fresh credentials for it (new random
 * passwords and a new API key). With the embedded database, stop the server first (PGlite is single-process).
 */
const config = loadConfig();
const services = await createServices({ ...config, logLevel: 'warn' });
try {
  await services.db.migrate();
  const credentials = await seedDemo(services);
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(credentials, null, 2)}\n`);
  else printCredentials(credentials);
} finally {
  await services.close();
}
