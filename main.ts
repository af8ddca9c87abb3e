import { ConfigError, loadConfig } from './app/config.ts';
import { seedDemoIfEmpty } from './app/seed-demo.ts';
import { startServer } from './app/server.ts';
import { createServices } from './app/services.ts';
import { lowerHelperThreadPriority } from './app/helper-thread-priority.ts';
import { startWebhookDelivery } from './engine/webhooks/start-webhook-delivery.ts';
import { startNotificationDelivery } from './engine/notify/start-notification-delivery.ts';

/** `npm start`: validate the environment, open the database, migrate, seed the demo on first start, serve. */
async function main(): Promise<void> {
  // Before any request: V8's compiler and GC helper threads yield the cores to the main thread (see the function).
  lowerHelperThreadPriority();
  const config = loadConfig();
  const services = await createServices(config);
  const applied = await services.db.migrate();
  if (applied.length > 0) services.logger.info({ migrations: applied }, 'migrations applied');
  if (config.seedDemo) await seedDemoIfEmpty(services);
  const running = await startServer(services);
  // Webhook workers run beside the relay that feeds them; tests start them with their own options instead.
  const webhooks = await startWebhookDelivery(services);
  const notifications = await startNotificationDelivery(services);
  services.logger.info({ port: running.port, database: services.db.kind, redis: Boolean(services.redis) }, 'listening');
  const stop = async () => {
    await running.close();
    await notifications.close();
    await services.close();
    webhooks.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
