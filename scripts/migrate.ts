import { loadConfig } from '../app/config.ts';
import { createServices } from '../app/services.ts';

/** `npm run migrate`: applies pending checked-in migrations and lists them. */
const services = await createServices(loadConfig());
try {
  const applied = await services.db.migrate();
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
} finally {
  await services.close();
}
