import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture } from '../support/fixtures.ts';
import { jobRequest } from '../support/job-fixtures.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait-for.ts';
import { acknowledged, eventIdOf, subscribe, verifyRequest } from '../support/webhook-fixtures.ts';
import { startWebhookReceiver, testCertificate, type WebhookReceiver } from '../support/webhook-receiver.ts';

const SECRET = randomBytes(32).toString('hex');

type Backend = 'bullmq' | 'table';

/** A database (and Redis prefix) per backend, so the two runs, which go on at the same time, share no relay or queue. */
const servers = {} as Record<Backend, TestServer>;
const started: ServerProcess[] = [];
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  for (const backend of ['bullmq', 'table'] as const) {
    servers[backend] = await startTestServer({ WEBHOOK_ALLOW_LOOPBACK: 'true', RATE_LIMIT_POINTS: '100000' });
    // Only the server processes under test may relay and deliver this database's events.
    await servers[backend].services.outboxRelay.stop();
  }
}, 60_000);
afterAll(async () => {
  await Promise.all(started.map((p) => p.kill('SIGKILL')));
  await Promise.all(receivers.map((r) => r.close()));
  await Promise.all(Object.values(servers).map((server) => server.close()));
});

/** The site's committed events: every outbox row, whatever became of the process that wrote it. */
async function committedEvents(server: TestServer, siteId: string): Promise<string[]> {
  const rows = await inTenantScope(server.services.db.orm, { siteId }, (em) => em.execute<{ id: string }[]>('select id from outbox'));
  return rows.map((row) => row.id);
}

/** The real server (`main.ts`, which starts the webhook workers) trusting the receiver's certificate. */
function serverEnv(backend: Backend): Record<string, string> {
  const server = servers[backend];
  return {
    DATABASE_URL: server.databaseUrl,
    ...(backend === 'bullmq' ? { REDIS_URL: server.services.config.redisUrl!, REDIS_PREFIX: server.services.config.redisPrefix } : {}),
    SECRET_KEY: server.services.config.secretKey,
    RATE_LIMIT_POINTS: '100000',
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    NODE_EXTRA_CA_CERTS: testCertificate().certPath,
  };
}

describe.concurrent.each(['bullmq', 'table'] as const)('a server killed (kill -9) while delivering webhooks, on the %s queue', (backend) => {
  it('delivers every committed event once a new process runs, duplicates only under the same webhook-id', async () => {
    const server = servers[backend];
    const fixture = await createSiteFixture(server, 'crash');
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    // A slow receiver keeps deliveries in flight when the process dies.
    receiver.reply = () => ({ status: 204, delayMs: 300 });
    await subscribe(fixture.as.admin, receiver.url(), ['*'], SECRET);

    const first = await startServerProcess(serverEnv(backend));
    started.push(first);
    const client = first.client('crash').as({ apiKey: fixture.keys.dispatcher });
    const traffic = { running: true };
    const creating = Promise.all(
      Array.from({ length: 6 }, async () => {
        while (traffic.running) {
          // Requests cut off by the kill fail; whatever committed is in the outbox and must arrive.
          const created = await client.post('/api/job', jobRequest()).catch(() => null);
          if (!created) traffic.running = false;
        }
      }),
    );
    await waitFor('deliveries under way', () => receiver.received.length >= 30, 20_000);
    // Requests the receiver holds now were never answered (the kill below runs in this same tick): their jobs were
    // running in the dead process, and only the queue's lock expiry can bring them back.
    const inFlight = receiver.received.filter((request) => request.status === 0).map(eventIdOf);
    await first.kill('SIGKILL');
    traffic.running = false;
    await creating;
    expect(inFlight.length).toBeGreaterThan(0);
    const committed = await committedEvents(server, fixture.site.id);

    const second = await startServerProcess(serverEnv(backend));
    started.push(second);
    await waitFor(
      `all ${committed.length} committed events delivered`,
      () => committed.every((id) => acknowledged(receiver.received).has(id)),
      40_000,
    );
    const requestsFor = (id: string) => receiver.received.filter((request) => eventIdOf(request) === id).length;
    await waitFor('the deliveries cut off by the kill to be sent again', () => inFlight.every((id) => requestsFor(id) >= 2), 40_000);
    await second.kill('SIGTERM');

    const known = new Set(committed);
    const bodyById = new Map<string, string>();
    for (const request of receiver.received) {
      const id = eventIdOf(request);
      expect(known.has(id)).toBe(true);
      expect(verifyRequest(SECRET, request.headers, request.body)).toEqual({ hex: true, standard: true });
      const body = request.body.toString('utf8');
      expect(bodyById.get(id) ?? body).toBe(body);
      bodyById.set(id, body);
    }
  }, 90_000);
});
