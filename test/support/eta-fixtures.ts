import { expect } from 'vitest';
import { ETA_QUEUE } from '../../engine/eta/eta-check.ts';
import { etaCheckJobId, etaWindowOf } from '../../engine/eta/eta-trigger.ts';
import { sessionClient, type SiteFixture } from './fixtures.ts';
import type { ApiClient } from './http-client.ts';
import type { TestServer } from './test-server.ts';
import { waitFor } from './wait-for.ts';

type One<T> = { data: T };

export type SentMessage = { channel: string; recipient: string; subject: string | null; body: string; status: string };

/** A driver (a worker with a login) and a client signed in as them. */
export type EtaDriverFixture = { id: string; email: string; client: ApiClient };

/** A worker of the site created by its dispatcher from `body` (email, names, ...), signed in with `driver-password`. */
export async function newEtaDriver(server: TestServer, site: SiteFixture, subdomain: string, body: { email: string } & Record<string, unknown>): Promise<EtaDriverFixture> {
  const made = await site.as.dispatcher.post<One<{ id: string }>>('/api/worker', { password: 'driver-password', ...body });
  if (made.status !== 201) throw new Error(`worker create failed: ${made.text}`);
  return { id: made.body.data.id, email: body.email, client: await sessionClient(server, subdomain, { email: body.email, password: 'driver-password' }) };
}

/**
 * Moves the engine clock past the ETA re-check throttle, posts the driver's position as the driver, and waits for
 * the ETA check it queued to finish (so the assertions after it see everything it sent).
 */
export async function driveTo(server: TestServer, site: SiteFixture, driver: EtaDriverFixture, at: { lat: number; lng: number }): Promise<void> {
  server.clock.advance(20);
  const window = etaWindowOf(server.clock.now());
  const posted = await driver.client.post<One<{ accepted: boolean }>>('/api/driver/location', { ...at, recorded_at: server.clock.now().toISOString() });
  expect(posted.body.data.accepted).toBe(true);
  await waitFor('the ETA check of this position', async () => {
    for (const candidate of [window, window + 1]) {
      const job = await server.services.queue.getJob(ETA_QUEUE, etaCheckJobId(site.site.id, driver.id, candidate));
      if (job?.status === 'failed') throw new Error(`eta check failed: ${job.lastError}`);
      if (job?.status === 'completed') return true;
    }
    return false;
  }, 10_000);
}

/** The messages the site sent to `recipient` (an email address, a phone number or, for push, a user id) by `channel`. */
export async function outbox(site: SiteFixture, channel: string, recipient: string): Promise<SentMessage[]> {
  const response = await site.as.admin.get<{ data: SentMessage[] }>(`/api/notification/outbox?channel=${channel}&recipient=${encodeURIComponent(recipient)}&per_page=100`);
  expect(response.status).toBe(200);
  return response.body.data;
}
