import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { createJob } from '../support/job-fixtures.ts';
import { sharedEnv, startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait-for.ts';
import { ask, collect, connectSocket } from './socket-client.ts';

type Positions = { data: { user_id: string; lat: number; recorded_at: string }[] };
type Feed = { event: string; entity_id: string };

let server: TestServer;
let acme: SiteFixture;
let globex: SiteFixture;
const processes: ServerProcess[] = [];

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  globex = await createSiteFixture(server, 'globex');
  const env = sharedEnv(server);
  // One after the other (a busy machine starts one in time more surely than two), each kept as soon as it runs so
  // afterAll stops it whatever happens next.
  for (let i = 0; i < 2; i += 1) processes.push(await startServerProcess(env));
}, 120_000);
afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill()));
  await server.close();
});

describe('two server processes behind Redis', () => {
  it('deliver a location sent to process 1 to a dispatcher on process 2, and to no other site', async () => {
    const [one, two] = processes as [ServerProcess, ServerProcess];
    const dispatcher = await connectSocket(two.port, 'acme', '/dispatch', { token: acme.keys.dispatcher });
    const outsider = await connectSocket(two.port, 'globex', '/dispatch', { token: globex.keys.dispatcher });
    const seen = collect<Positions>(dispatcher, 'driver:locations');
    const leaked = collect<Positions>(outsider, 'driver:locations');
    const driver = await connectSocket(one.port, 'acme', '/driver', { token: acme.keys.driver });
    const recordedAt = new Date().toISOString();
    expect(await ask(driver, 'location', { lat: 51.5, lng: -0.12, recorded_at: recordedAt })).toEqual({ data: { accepted: true } });
    await waitFor('the position on process 2', () => seen.some((m) => m.data.some((p) => p.recorded_at === recordedAt && p.lat === 51.5)), 5000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(leaked).toEqual([]);
    for (const socket of [dispatcher, outsider, driver]) socket.close();
  }, 30_000);

  it('deliver a job event committed on process 1 to dispatchers on both processes, once each', async () => {
    const [one, two] = processes as [ServerProcess, ServerProcess];
    const sockets = await Promise.all([one, two].map((p) => connectSocket(p.port, 'acme', '/dispatch', { token: acme.keys.dispatcher })));
    const feeds = sockets.map((socket) => collect<Feed>(socket, 'feed'));
    const job = await createJob(one.client('acme').as({ apiKey: acme.keys.dispatcher }));
    await waitFor('the job on both processes', () => feeds.every((feed) => feed.some((e) => e.entity_id === job.id)), 5000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const feed of feeds) expect(feed.filter((e) => e.entity_id === job.id).map((e) => e.event)).toEqual(['job:create']);
    for (const socket of sockets) socket.close();
  }, 30_000);

  it('take a driver offline when the grace period ends, though the process the driver left was killed meanwhile', async () => {
    const env = sharedEnv(server, { DRIVER_DISCONNECT_GRACE_SECONDS: '2' });
    const doomed = await startServerProcess(env);
    processes.push(doomed);
    const driver = doomed.client('acme').as({ apiKey: acme.keys.driver });
    expect((await driver.put('/api/driver/status', { availability: 'available' })).status).toBe(200);
    const socket = await connectSocket(doomed.port, 'acme', '/driver', { token: acme.keys.driver });
    socket.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await doomed.kill('SIGKILL'); // no shutdown, no timer left anywhere: only the queued grace period remains
    const availability = async () => (await acme.as.driver.get<{ data: { availability: string } }>('/api/driver/location')).body.data.availability;
    expect(await availability()).toBe('available');
    await waitFor('the driver offline after the grace period', async () => (await availability()) === 'offline', 10_000);
  }, 60_000);
});
