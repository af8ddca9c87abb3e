import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createJob } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';

/**
 * Writes a client may send several times at once (a mobile app retrying on a flaky network) answer every copy as
 * they answer one: linking an attachment twice changes nothing, and a site's first branding update racing another
 * is applied after it, not refused as a duplicate row.
 */
type One<T> = { data: T };
type Presigned = { attachment_id: string; upload: { url: string; headers: Record<string, string> } };
type AuditRows = { data: { action: string }[] };

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const COPIES = 6;

let directory: string;
// Registered before the site, so it runs after its server has closed.
afterAll(() => rm(directory, { recursive: true, force: true }));
const sites = useOneSite(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'concurrent-writes-'));
  return { ATTACHMENT_DIR: directory };
});

function put(url: string, body: Buffer, headers: Record<string, string>): Promise<number> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const headersOut = { host: `acme.localhost:${sites.server.port}`, 'content-length': String(body.length), ...headers };
    const req = request({ host: '127.0.0.1', port: sites.server.port, method: 'PUT', path: `${target.pathname}${target.search}`, headers: headersOut }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function readyPng(): Promise<string> {
  const presigned = await sites.acme.as.admin.post<One<Presigned>>('/api/attachment/presign', { file_name: 'proof.png', content_type: 'image/png', size: PNG.length });
  const { attachment_id, upload } = presigned.body.data;
  expect(await put(upload.url, PNG, upload.headers)).toBe(200);
  expect((await sites.acme.as.admin.post('/api/attachment/confirm', { attachment_id })).status).toBe(200);
  return attachment_id;
}

const audit = async (entityType: string, entityId: string) =>
  (await sites.acme.as.admin.get<AuditRows>(`/api/audit/search?entity_type=${entityType}&entity_id=${entityId}`)).body.data.map((r) => r.action).sort();

describe('concurrent copies of one write', () => {
  it('the same attachment linked to a job by several requests at once: every one succeeds, one link is made', async () => {
    const job = await createJob(sites.acme.as.dispatcher);
    const photo = await readyPng();
    const link = () => sites.acme.as.dispatcher.post<One<{ attachments: { id: string }[] }>>('/api/job/attachments', { job_id: job.id, attachment_ids: [photo] });
    const answers = await Promise.all(Array.from({ length: COPIES }, link));
    expect(answers.map((a) => [a.status, a.body.data?.attachments.map((x) => x.id)])).toEqual(Array.from({ length: COPIES }, () => [200, [photo]]));
    const listed = await sites.acme.as.admin.get<One<{ attachments: { id: string }[] }>>(`/api/job/attachments?job_id=${job.id}`);
    expect(listed.body.data.attachments.map((a) => a.id)).toEqual([photo]);
    expect((await audit('Job', job.id)).filter((action) => action === 'attach')).toEqual(['attach']);
  });

  it("a site's first branding updates sent at once all apply, one after the other, the first audited as the creation", async () => {
    const names = Array.from({ length: COPIES }, (_, i) => `Acme ${i}`);
    const answers = await Promise.all(names.map((company_name) => sites.acme.as.admin.put<One<{ company_name: string }>>('/api/branding', { company_name })));
    expect(answers.map((a) => a.status)).toEqual(names.map(() => 200));
    expect(answers.map((a) => a.body.data.company_name).sort()).toEqual(names);
    const current = await sites.acme.as.admin.get<One<{ company_name: string }>>('/api/branding');
    expect(names).toContain(current.body.data.company_name);
    expect(await audit('SiteBranding', sites.acme.site.id)).toEqual(['create', ...names.slice(1).map(() => 'update')]);
  });
});
