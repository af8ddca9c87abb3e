import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startWebhookDelivery, type WebhookDeliveryOptions } from '../../engine/webhooks/start-webhook-delivery.ts';
import { createSiteFixture, type SiteFixture } from './fixtures.ts';
import { startTestServer, type TestServer } from './test-server.ts';
import { emitEvents } from './webhook-fixtures.ts';
import { startWebhookReceiver, testCertificate, type WebhookReceiver } from './webhook-receiver.ts';

export type WebhookHarness = {
  server: TestServer;
  orm: MikroORM;
  /** A new site (with its users and keys), so one test's subscriptions never see another test's events. */
  freshSite(): Promise<{ fixture: SiteFixture; siteId: string; admin: SiteFixture['as']['admin'] }>;
  /** A new HTTPS receiver on loopback, closed by `closeReceivers`. */
  receiver(): Promise<WebhookReceiver>;
  /** Commits `count` events for the site and kicks the relay; returns their ids. */
  emit(siteId: string, count: number, event?: string): Promise<string[]>;
  closeReceivers(): Promise<void>;
  close(): Promise<void>;
};

/** Short waits so retries play out in seconds: 25 ms doubling to 1.5 s, 8 attempts (about 3 s in all). */
export const FAST_RETRY = { maxAttempts: 8, baseDelayMs: 25, maxDelayMs: 1500, jitter: 0.2 };

/**
 * A test server (loopback webhooks allowed) whose webhook workers run in this process with the test's options
 * (retries {@link FAST_RETRY} unless given), trusting the test receivers' self-signed certificate. Registers the
 * hooks that start it before the file's tests, close its receivers after each test and close it all at the end; the
 * returned harness is usable once that `beforeAll` has run (in hooks and tests).
 */
export function useWebhookHarness(options: WebhookDeliveryOptions, env: Record<string, string> = {}): WebhookHarness {
  const harness = {} as WebhookHarness;
  beforeAll(async () => {
    Object.assign(harness, await startWebhookHarness(options, env));
  });
  afterEach(() => harness.closeReceivers());
  afterAll(() => harness.close());
  return harness;
}

async function startWebhookHarness(options: WebhookDeliveryOptions, env: Record<string, string>): Promise<WebhookHarness> {
  const server = await startTestServer({ WEBHOOK_ALLOW_LOOPBACK: 'true', RATE_LIMIT_POINTS: '100000', DATABASE_POOL_SIZE: '10', ...env });
  const delivery = await startWebhookDelivery(server.services, { ca: testCertificate().cert, retry: FAST_RETRY, ...options });
  const orm = server.services.db.orm;
  const receivers: WebhookReceiver[] = [];
  let sites = 0;
  const closeReceivers = async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  };
  return {
    server,
    orm,
    async freshSite() {
      const fixture = await createSiteFixture(server, `hooks${++sites}`);
      return { fixture, siteId: fixture.site.id, admin: fixture.as.admin };
    },
    async receiver() {
      const started = await startWebhookReceiver();
      receivers.push(started);
      return started;
    },
    async emit(siteId, count, event) {
      const ids = await emitEvents(orm, siteId, count, event);
      server.services.outboxRelay.kick();
      return ids;
    },
    closeReceivers,
    async close() {
      await closeReceivers();
      await server.close();
      delivery.close();
    },
  };
}
