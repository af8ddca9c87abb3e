import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadReadyPng } from '../support/attachment-upload.ts';
import { sessionClient } from '../support/fixtures.ts';
import type { ApiClient } from '../support/http-client.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';

// A stop move that requires an attachment is met by the stop's own proof: a ready attachment linked to that stop, or
// to its job as a whole (as driver apps that predate stop links send it), uploaded by staff or a driver; not the
// customer's upload nor another stop's photo.

type One<T = Record<string, unknown>> = { data: T };
type Failure = { code: string; error: string; details?: { missing?: string[] } };
type Workflow = { states: Record<string, unknown>[]; transitions: Record<string, unknown>[] };
type Linked = { id: string; stop_id: string | null };

let directory: string;
// Registered before the site, so it runs after its server has closed.
afterAll(() => rm(directory, { recursive: true, force: true }));
const site = useOneSite(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'stop-proof-'));
  return { ATTACHMENT_DIR: directory, ATTACHMENT_MAX_BYTES: '50000', ATTACHMENT_ALLOWED_TYPES: 'image/*' };
});
let customer: ApiClient;
let driver: ApiClient;
let stopStates: Record<string, string>;

beforeAll(async () => {
  customer = await sessionClient(site.server, 'acme', site.acme.users.customer);
  driver = await sessionClient(site.server, 'acme', site.acme.users.driver);
  const current = await site.acme.as.admin.get<One<Workflow>>('/api/workflow?entity_type=stop');
  const transitions = current.body.data.transitions.map((t) => (t.from === 'arrived' && t.to === 'completed' ? { ...t, requires: ['attachment'] } : t));
  const put = await site.acme.as.admin.put('/api/workflow', { entity_type: 'stop', states: current.body.data.states, transitions });
  if (put.status !== 200) throw new Error(`workflow update failed: ${put.status} ${put.text}`);
  stopStates = await stateIds(site.acme.as.admin, 'stop');
});

/** The customer's job, dispatched to the driver, both stops arrived. */
async function jobAtBothStops(): Promise<{ id: string; pickup: string; dropoff: string }> {
  const job = await createJob(site.acme.as.dispatcher, { customer_email: undefined, customer_user_id: site.acme.users.customer.id, driver_user_id: site.acme.users.driver.id });
  const jobStates = await stateIds(site.acme.as.admin, 'job');
  expect((await site.acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched })).status).toBe(200);
  for (const stop of job.stops) {
    for (const state of ['en_route', 'arrived']) expect((await driver.post('/api/driver/stop/state', { stop_id: stop.id, workflow_state_id: stopStates[state] })).status).toBe(200);
  }
  return { id: job.id, pickup: job.stops[0]!.id, dropoff: job.stops[1]!.id };
}

const complete = (stopId: string) => site.acme.as.dispatcher.post<Failure>('/api/stop/state', { stop_id: stopId, workflow_state_id: stopStates.completed });

describe("a stop's attachment requirement", () => {
  it("is not met by the customer's own upload, linked to the job or to the stop", async () => {
    const job = await jobAtBothStops();
    const theirs = await uploadReadyPng(site.server, 'acme', customer);
    expect((await customer.post('/api/job/attachments', { job_id: job.id, attachment_ids: [theirs] })).status).toBe(200);
    const refused = await complete(job.dropoff);
    expect([refused.status, refused.body.code, refused.body.details?.missing]).toEqual([422, 'REQUIREMENT_NOT_MET', ['attachment']]);
    expect(refused.body.error).toContain('needs an attachment of this stop');
    const narrowed = await customer.post<One<{ attachments: Linked[] }>>('/api/job/attachments', { job_id: job.id, attachment_ids: [theirs], stop_id: job.dropoff });
    expect(narrowed.body.data.attachments).toMatchObject([{ id: theirs, stop_id: job.dropoff }]);
    expect((await complete(job.dropoff)).body.code).toBe('REQUIREMENT_NOT_MET');
  });

  it("is met for the dropoff only by the driver's photo linked to the dropoff, not by the pickup's", async () => {
    const job = await jobAtBothStops();
    const pickupPhoto = await uploadReadyPng(site.server, 'acme', driver);
    expect((await driver.post('/api/job/attachments', { job_id: job.id, attachment_ids: [pickupPhoto], stop_id: job.pickup })).status).toBe(200);
    expect((await complete(job.pickup)).status).toBe(200);
    expect((await complete(job.dropoff)).body.code).toBe('REQUIREMENT_NOT_MET');

    const dropoffPhoto = await uploadReadyPng(site.server, 'acme', driver);
    const linked = await driver.post<One<{ attachments: Linked[] }>>('/api/job/attachments', { job_id: job.id, attachment_ids: [dropoffPhoto], stop_id: job.dropoff });
    expect(linked.body.data.attachments).toEqual([expect.objectContaining({ id: pickupPhoto, stop_id: job.pickup }), expect.objectContaining({ id: dropoffPhoto, stop_id: job.dropoff })]);
    const moved = await complete(job.dropoff);
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect((await site.acme.as.dispatcher.get<One<{ phase: string }>>(`/api/job/${job.id}`)).body.data.phase).toBe('completed');
  });

  it("is met by the driver's photo linked to the job as a whole, for each of its stops", async () => {
    const job = await jobAtBothStops();
    const photo = await uploadReadyPng(site.server, 'acme', driver);
    const linked = await driver.post<One<{ attachments: Linked[] }>>('/api/job/attachments', { job_id: job.id, attachment_ids: [photo] });
    expect(linked.body.data.attachments).toMatchObject([{ id: photo, stop_id: null }]);
    for (const stop of [job.pickup, job.dropoff]) {
      const moved = await complete(stop);
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    }
    expect((await site.acme.as.dispatcher.get<One<{ phase: string }>>(`/api/job/${job.id}`)).body.data.phase).toBe('completed');
  });

  it('refuses a stop of another job, and moving a link from one stop to another', async () => {
    const job = await jobAtBothStops();
    const other = await createJob(site.acme.as.dispatcher);
    const photo = await uploadReadyPng(site.server, 'acme', driver);
    const foreign = await driver.post<Failure & { fields?: { field: string }[] }>('/api/job/attachments', { job_id: job.id, attachment_ids: [photo], stop_id: other.stops[0]!.id });
    expect([foreign.status, foreign.body.fields?.[0]?.field]).toEqual([404, 'stop_id']);
    expect((await driver.post('/api/job/attachments', { job_id: job.id, attachment_ids: [photo], stop_id: job.pickup })).status).toBe(200);
    const moved = await driver.post<Failure>('/api/job/attachments', { job_id: job.id, attachment_ids: [photo], stop_id: job.dropoff });
    expect([moved.status, moved.body.code]).toEqual([409, 'ATTACHMENT_ON_ANOTHER_STOP']);
  });
});
