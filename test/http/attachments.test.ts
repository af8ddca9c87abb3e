import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { toAttachmentSettings } from '../../engine/attachments/attachment-settings.ts';
import { S3AttachmentStorage } from '../../engine/attachments/s3-storage.ts';
import type { Attachment } from '../../persistence/entities/attachment.entity.ts';
import { type SiteFixture } from '../support/fixtures.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { useTwoSites } from '../support/two-sites.ts';

type One<T = Record<string, unknown>> = { data: T };
type Failure = { code: string; fields?: { field: string }[] };
type Upload = { url: string; method: string; headers: Record<string, string>; expires_at: string };
type Presigned = { attachment_id: string; upload: Upload };
type AttachmentBody = { id: string; status: string; size: number; content_type: string; file_name: string; remote_url: string | null; created_by_user_id: string | null };

/** A real 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

let directory: string;
// Registered before the sites, so it runs after their server has closed.
afterAll(() => rm(directory, { recursive: true, force: true }));
const sites = useTwoSites(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'attachments-'));
  return { ATTACHMENT_DIR: directory, ATTACHMENT_MAX_BYTES: '50000', ATTACHMENT_ALLOWED_TYPES: 'image/*,application/pdf,text/plain' };
});

/** Sends raw bytes to a signed URL on the test server (its path and query, with the site's Host). */
function transfer(url: string, site: string, method: 'PUT' | 'GET', body?: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer; json: Record<string, unknown> }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: sites.server.port, method, path: `${target.pathname}${target.search}`, headers: { host: `${site}.localhost:${sites.server.port}`, ...(body ? { 'content-length': String(body.length) } : {}), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const data = Buffer.concat(chunks);
          const json = res.headers['content-type']?.includes('json') ? (JSON.parse(data.toString()) as Record<string, unknown>) : {};
          resolve({ status: res.statusCode ?? 0, body: data, json });
        });
      },
    );
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

async function presign(site: SiteFixture, body: Record<string, unknown> = {}, as: keyof SiteFixture['as'] = 'driver'): Promise<Presigned> {
  const response = await site.as[as].post<One<Presigned>>('/api/attachment/presign', { file_name: 'proof.png', content_type: 'image/png', size: PNG.length, purpose: 'proof_of_delivery', ...body });
  if (response.status !== 201) throw new Error(`presign failed: ${response.status} ${response.text}`);
  return response.body.data;
}

/** Presigns, uploads and confirms a PNG: a ready attachment. */
async function readyAttachment(site: SiteFixture, as: keyof SiteFixture['as'] = 'driver'): Promise<string> {
  const { attachment_id, upload } = await presign(site, {}, as);
  expect((await transfer(upload.url, site.site.subdomain, 'PUT', PNG, upload.headers)).status).toBe(200);
  expect((await site.as[as].post('/api/attachment/confirm', { attachment_id })).status).toBe(200);
  return attachment_id;
}

describe('attachments', () => {
  it('presigns, uploads to the signed URL, confirms, attaches to a job and downloads through a signed URL', async () => {
    const { attachment_id, upload } = await presign(sites.acme, {}, 'dispatcher');
    expect(upload).toMatchObject({ method: 'PUT', headers: { 'Content-Type': 'image/png' } });
    expect(upload.url).toContain(`/api/attachment/upload/${attachment_id}?expires=`);
    expect(Date.parse(upload.expires_at) - Date.now()).toBeGreaterThan(800_000);
    const put = await transfer(upload.url, 'acme', 'PUT', PNG, upload.headers);
    expect([put.status, put.json]).toEqual([200, { data: { attachment_id, size: PNG.length } }]);

    const confirmed = await sites.acme.as.dispatcher.post<One<AttachmentBody>>('/api/attachment/confirm', { attachment_id });
    expect(confirmed.body.data).toMatchObject({ id: attachment_id, status: 'ready', size: PNG.length, content_type: 'image/png', file_name: 'proof.png' });
    const job = await createJob(sites.acme.as.dispatcher);
    const attached = await sites.acme.as.dispatcher.post<One<{ attachments: AttachmentBody[] }>>('/api/job/attachments', { job_id: job.id, attachment_ids: [attachment_id] });
    expect(attached.status, attached.text).toBe(200);
    expect(attached.body.data.attachments.map((a) => a.id)).toEqual([attachment_id]);
    const listed = await sites.acme.as.admin.get<One<{ attachments: AttachmentBody[] }>>(`/api/job/attachments?job_id=${job.id}`);
    const url = listed.body.data.attachments[0]!.remote_url!;
    const file = await transfer(url, 'acme', 'GET');
    expect(file.status).toBe(200);
    expect(file.body.equals(PNG)).toBe(true);
    expect((await transfer(url.replace(/signature=(.)/, (_, first: string) => `signature=${first === 'A' ? 'B' : 'A'}`), 'acme', 'GET')).json.code).toBe('INVALID_SIGNATURE');
    const audit = await sites.acme.as.admin.get<{ data: { action: string }[] }>(`/api/audit/search?entity_type=Attachment&entity_id=${attachment_id}`);
    expect(audit.body.data.map((r) => r.action).sort()).toEqual(['confirm', 'create']);
  });

  it('an attachment used before confirmation is rejected', async () => {
    const { attachment_id, upload } = await presign(sites.acme, {}, 'dispatcher');
    const job = await createJob(sites.acme.as.dispatcher);
    const early = await sites.acme.as.dispatcher.post<Failure>('/api/job/attachments', { job_id: job.id, attachment_ids: [attachment_id] });
    expect([early.status, early.body.code, early.body.fields?.[0]?.field]).toEqual([409, 'ATTACHMENT_NOT_READY', 'attachment_ids.0']);
    const missing = await sites.acme.as.dispatcher.post<Failure>('/api/attachment/confirm', { attachment_id });
    expect([missing.status, missing.body.code]).toEqual([409, 'UPLOAD_MISSING']);
    await transfer(upload.url, 'acme', 'PUT', PNG, upload.headers);
    const uploadedOnly = await sites.acme.as.dispatcher.post<Failure>('/api/job/attachments', { job_id: job.id, attachment_ids: [attachment_id] });
    expect(uploadedOnly.body.code).toBe('ATTACHMENT_NOT_READY');
    const logo = await sites.acme.as.admin.put<Failure>('/api/branding', { logo_attachment_id: attachment_id });
    expect([logo.status, logo.body.code]).toEqual([409, 'ATTACHMENT_NOT_READY']);
    expect((await sites.acme.as.admin.get<One<{ attachments: unknown[] }>>(`/api/job/attachments?job_id=${job.id}`)).body.data.attachments).toEqual([]);
  });

  it('an expired upload URL is refused', async () => {
    const { attachment_id, upload } = await presign(sites.acme);
    sites.server.clock.advance(901);
    try {
      const late = await transfer(upload.url, 'acme', 'PUT', PNG, upload.headers);
      expect([late.status, late.json.code]).toEqual([403, 'URL_EXPIRED']);
    } finally {
      sites.server.clock.advance(-901);
    }
    expect((await sites.acme.as.driver.post<Failure>('/api/attachment/confirm', { attachment_id })).body.code).toBe('UPLOAD_MISSING');
  });

  it('a tampered URL is refused: signature, expiry, attachment id, or another site host', async () => {
    const { attachment_id, upload } = await presign(sites.acme);
    const other = await presign(sites.acme);
    const url = new URL(upload.url);
    const expires = Number(url.searchParams.get('expires'));
    const tampered = [
      upload.url.replace(/signature=[^&]+/, 'signature=AAAA'),
      upload.url.replace(`expires=${expires}`, `expires=${expires + 3600}`),
      upload.url.replace(attachment_id, other.attachment_id),
    ];
    for (const bad of tampered) {
      const response = await transfer(bad, 'acme', 'PUT', PNG, upload.headers);
      expect([response.status, response.json.code], bad).toEqual([403, 'INVALID_SIGNATURE']);
    }
    expect((await transfer(upload.url, 'globex', 'PUT', PNG, upload.headers)).json.code).toBe('INVALID_SIGNATURE');
    const wrongType = await transfer(upload.url, 'acme', 'PUT', PNG, { 'Content-Type': 'image/gif' });
    expect([wrongType.status, wrongType.json.code]).toEqual([400, 'CONTENT_TYPE_MISMATCH']);
    const tooBig = await transfer(upload.url, 'acme', 'PUT', Buffer.concat([PNG, PNG]), upload.headers);
    expect([tooBig.status, tooBig.json.code]).toEqual([413, 'UPLOAD_TOO_LARGE']);
    expect((await sites.acme.as.driver.post<Failure>('/api/attachment/confirm', { attachment_id })).body.code).toBe('UPLOAD_MISSING');
  });

  it('confirmation checks the stored size and content', async () => {
    const short = await presign(sites.acme, { size: PNG.length + 10 });
    await transfer(short.upload.url, 'acme', 'PUT', PNG, short.upload.headers);
    const sized = await sites.acme.as.driver.post<Failure>('/api/attachment/confirm', { attachment_id: short.attachment_id });
    expect([sized.status, sized.body.code]).toEqual([422, 'SIZE_MISMATCH']);
    const text = Buffer.from('this is not a png at all, just some text');
    const fake = await presign(sites.acme, { size: text.length });
    await transfer(fake.upload.url, 'acme', 'PUT', text, fake.upload.headers);
    const typed = await sites.acme.as.driver.post<Failure>('/api/attachment/confirm', { attachment_id: fake.attachment_id });
    expect([typed.status, typed.body.code]).toEqual([422, 'CONTENT_TYPE_MISMATCH']);
  });

  it('enforces the configured type and size limits on presign', async () => {
    const type = await sites.acme.as.driver.post<Failure>('/api/attachment/presign', { file_name: 'a.exe', content_type: 'application/x-msdownload', size: 10 });
    expect([type.status, type.body.code, type.body.fields?.[0]?.field]).toEqual([400, 'CONTENT_TYPE_NOT_ALLOWED', 'content_type']);
    const size = await sites.acme.as.driver.post<Failure>('/api/attachment/presign', { file_name: 'big.pdf', content_type: 'application/pdf', size_bytes: 50_001 });
    expect([size.status, size.body.code, size.body.fields?.[0]?.field]).toEqual([400, 'FILE_TOO_LARGE', 'size']);
    const none = await sites.acme.as.driver.post<Failure>('/api/attachment/presign', { file_name: 'a.pdf', content_type: 'application/pdf' });
    expect(none.body.code).toBe('SIZE_REQUIRED');
    expect((await sites.acme.as.driver.post('/api/attachment/presign', { file_name: 'a.gif', content_type: 'image/gif', size_bytes: 10 })).status).toBe(201);
  });

  it('a workflow move that requires an attachment passes only once the job has a ready one', async () => {
    type Workflow = { states: Record<string, unknown>[]; transitions: Record<string, unknown>[] };
    const current = await sites.globex.as.admin.get<One<Workflow>>('/api/workflow?entity_type=job');
    const states = [...current.body.data.states, { key: 'proof_filed', name: 'Proof filed', phase: 'unassigned', is_initial: false, is_terminal: false }];
    const transitions = [...current.body.data.transitions, { from: 'created', to: 'proof_filed', requires: ['attachment'] }, { from: 'proof_filed', to: 'created' }];
    expect((await sites.globex.as.admin.put('/api/workflow', { entity_type: 'job', states, transitions })).status).toBe(200);
    const job = await createJob(sites.globex.as.dispatcher);
    const proofFiled = (await stateIds(sites.globex.as.admin, 'job')).proof_filed;
    const refused = await sites.globex.as.dispatcher.post<Failure>('/api/job/state', { job_id: job.id, workflow_state_id: proofFiled });
    expect([refused.status, refused.body.code]).toEqual([422, 'REQUIREMENT_NOT_MET']);

    const attachment = await readyAttachment(sites.globex, 'dispatcher');
    expect((await sites.globex.as.dispatcher.post('/api/job/attachments', { job_id: job.id, attachment_ids: [attachment] })).status).toBe(200);
    const moved = await sites.globex.as.dispatcher.post<One<{ workflow_state_id: string }>>('/api/job/state', { job_id: job.id, workflow_state_id: proofFiled });
    expect([moved.status, moved.body.data.workflow_state_id]).toEqual([200, proofFiled]);
  });

  it("keeps attachments to their site and, for drivers and customers, to their uploader", async () => {
    const id = await readyAttachment(sites.acme, 'driver');
    expect((await sites.globex.as.admin.get(`/api/attachment?id=${id}`)).status).toBe(404);
    expect((await sites.acme.as.customer.get(`/api/attachment?id=${id}`)).status).toBe(404);
    expect((await sites.acme.as.admin.get<One<AttachmentBody>>(`/api/attachment?id=${id}`)).body.data.status).toBe('ready');
    const theirJob = await createJob(sites.globex.as.dispatcher);
    expect((await sites.globex.as.dispatcher.post('/api/job/attachments', { job_id: theirJob.id, attachment_ids: [id] })).status).toBe(404);
    const ownJob = await createJob(sites.acme.as.customer, { customer_email: undefined });
    const foreign = await sites.acme.as.customer.post<Failure>('/api/job/attachments', { job_id: ownJob.id, attachment_ids: [id] });
    expect([foreign.status, foreign.body.fields?.[0]?.field]).toEqual([404, 'attachment_ids.0']);
    const mine = await readyAttachment(sites.acme, 'customer');
    expect((await sites.acme.as.customer.post('/api/job/attachments', { job_id: ownJob.id, attachment_ids: [mine] })).status).toBe(200);
  });

  it("lets a customer read a file staff attached to their job by id, as the job's list shows it, and nothing else of staff's", async () => {
    const ownJob = await createJob(sites.acme.as.customer, { customer_email: undefined });
    const instructions = await readyAttachment(sites.acme, 'dispatcher');
    const unlinked = await readyAttachment(sites.acme, 'dispatcher');
    expect((await sites.acme.as.customer.get(`/api/attachment?id=${instructions}`)).status).toBe(404);
    expect((await sites.acme.as.dispatcher.post('/api/job/attachments', { job_id: ownJob.id, attachment_ids: [instructions] })).status).toBe(200);
    const listed = await sites.acme.as.customer.get<One<{ attachments: AttachmentBody[] }>>(`/api/job/attachments?job_id=${ownJob.id}`);
    expect(listed.body.data.attachments.map((a) => a.id)).toEqual([instructions]);
    const byId = await sites.acme.as.customer.get<One<AttachmentBody>>(`/api/attachment?id=${instructions}`);
    expect([byId.status, byId.body.data.id]).toEqual([200, instructions]);
    expect((await sites.acme.as.customer.get(`/api/attachment?id=${unlinked}`)).status).toBe(404);
    // Read, not used: a customer still attaches only what they uploaded.
    expect((await sites.acme.as.customer.post('/api/job/attachments', { job_id: ownJob.id, attachment_ids: [instructions] })).status).toBe(404);
  });
});

describe('the S3 driver', () => {
  it('presigns uploads that sign the content type and length to an upload key, and downloads that name the file from another', async () => {
    const settings = toAttachmentSettings(
      { ATTACHMENT_STORAGE: 's3', ATTACHMENT_S3_BUCKET: 'dispatch-files', ATTACHMENT_S3_REGION: 'eu-west-3', ATTACHMENT_S3_ENDPOINT: 'http://127.0.0.1:9000', ATTACHMENT_S3_ACCESS_KEY_ID: 'AKIDEXAMPLE', ATTACHMENT_S3_SECRET_ACCESS_KEY: 'secret', ATTACHMENT_S3_FORCE_PATH_STYLE: true, ATTACHMENT_MAX_BYTES: 100, ATTACHMENT_ALLOWED_TYPES: 'image/*', ATTACHMENT_URL_TTL_SECONDS: 300, BASE_DOMAIN: 'localhost', PORT: 3000 },
      '/tmp',
    );
    const storage = new S3AttachmentStorage(settings.s3!);
    const attachment = { id: 'att_1', siteId: 'site_1', contentType: 'image/png', size: 68, remotePath: 'site_1/abc', fileName: 'reçu.png' } as Attachment;
    const expiresAt = new Date(Date.now() + 300_000);
    const upload = await storage.uploadTarget(attachment, { id: 'site_1', subdomain: 'acme' }, expiresAt);
    const url = new URL(upload.url);
    // Confirmation copies the checked upload to the key downloads read: no upload URL can replace it afterwards.
    expect(url.origin + url.pathname).toBe('http://127.0.0.1:9000/dispatch-files/uploads/site_1/abc');
    expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toEqual(expect.arrayContaining(['content-type', 'content-length', 'host']));
    expect(Number(url.searchParams.get('X-Amz-Expires'))).toBeGreaterThan(290);
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(upload.headers).toEqual({ 'Content-Type': 'image/png' });
    const download = new URL(await storage.downloadUrl(attachment, { id: 'site_1', subdomain: 'acme' }, expiresAt));
    expect(download.searchParams.get('response-content-disposition')).toContain("filename*=UTF-8''re%C3%A7u.png");
    expect(download.origin + download.pathname).toBe('http://127.0.0.1:9000/dispatch-files/site_1/abc');
  });
});
