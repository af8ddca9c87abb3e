import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useTwoSites } from '../support/two-sites.ts';

type One<T = Record<string, unknown>> = { data: T };
type Failure = { code: string; fields?: { field: string }[] };
type Branding = { site_id: string; site_name: string; company_name: string | null; app_name: string | null; primary_color: string | null; logo_attachment_id: string | null; logo_url: string | null; support_email: string | null };
type Presigned = { attachment_id: string; upload: { url: string; headers: Record<string, string> } };

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const PDF = Buffer.from('%PDF-1.4\n%%EOF\n');

let directory: string;
// Registered before the sites, so it runs after their server has closed.
afterAll(() => rm(directory, { recursive: true, force: true }));
const sites = useTwoSites(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'branding-'));
  return { ATTACHMENT_DIR: directory };
});

function put(url: string, body: Buffer, headers: Record<string, string>): Promise<number> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: sites.server.port, method: 'PUT', path: `${target.pathname}${target.search}`, headers: { host: `acme.localhost:${sites.server.port}`, 'content-length': String(body.length), ...headers } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function uploaded(fileName: string, contentType: string, body: Buffer): Promise<string> {
  const presigned = await sites.acme.as.admin.post<One<Presigned>>('/api/attachment/presign', { file_name: fileName, content_type: contentType, size: body.length, purpose: 'logo' });
  const { attachment_id, upload } = presigned.body.data;
  expect(await put(upload.url, body, upload.headers)).toBe(200);
  expect((await sites.acme.as.admin.post('/api/attachment/confirm', { attachment_id })).status).toBe(200);
  return attachment_id;
}

describe('branding', () => {
  it('reads a blank branding before any is set, without a credential', async () => {
    const response = await sites.server.client('acme').get<One<Branding>>('/api/branding');
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ site_id: sites.acme.site.id, site_name: 'acme', company_name: null, logo_url: null });
  });

  it('updates three-state, sets a ready image as logo with a signed URL, and audits each change', async () => {
    const logo = await uploaded('logo.png', 'image/png', PNG);
    const set = await sites.acme.as.admin.put<One<Branding>>('/api/branding', { company_name: 'Acme Couriers', app_name: 'Acme Go', primary_color: '#1A73E8', support_email: 'help@acme.example', logo_attachment_id: logo });
    expect(set.status, set.text).toBe(200);
    expect(set.body.data).toMatchObject({ company_name: 'Acme Couriers', app_name: 'Acme Go', primary_color: '#1A73E8', logo_attachment_id: logo });
    expect(set.body.data.logo_url).toContain(`/api/attachment/file/${logo}?expires=`);

    const partial = await sites.acme.as.admin.put<One<Branding>>('/api/branding', { app_name: null, primary_color: '#000000' });
    expect(partial.body.data).toMatchObject({ company_name: 'Acme Couriers', app_name: null, primary_color: '#000000', support_email: 'help@acme.example', logo_attachment_id: logo });
    const read = await sites.acme.as.driver.get<One<Branding>>('/api/branding');
    expect(read.body.data).toMatchObject({ company_name: 'Acme Couriers', primary_color: '#000000' });
    const audit = await sites.acme.as.admin.get<{ data: { action: string }[] }>(`/api/audit/search?entity_type=SiteBranding&entity_id=${sites.acme.site.id}`);
    expect(audit.body.data.map((r) => r.action).sort()).toEqual(['create', 'update']);

    const removed = await sites.acme.as.admin.put<One<Branding>>('/api/branding', { logo_attachment_id: null });
    expect(removed.body.data).toMatchObject({ logo_attachment_id: null, logo_url: null });
  });

  it('refuses bad colours, a logo that is not an image, non-admins, and leaves other sites alone', async () => {
    const colour = await sites.acme.as.admin.put<Failure>('/api/branding', { primary_color: 'blue' });
    expect(colour.status).toBe(400);
    const pdf = await uploaded('logo.pdf', 'application/pdf', PDF);
    const notImage = await sites.acme.as.admin.put<Failure>('/api/branding', { logo_attachment_id: pdf });
    expect([notImage.status, notImage.body.code]).toEqual([422, 'LOGO_NOT_IMAGE']);
    expect((await sites.acme.as.dispatcher.put('/api/branding', { company_name: 'Nope' })).status).toBe(403);
    const foreignLogo = await sites.globex.as.admin.put<Failure>('/api/branding', { logo_attachment_id: pdf });
    expect([foreignLogo.status, foreignLogo.body.fields?.[0]?.field]).toEqual([404, 'logo_attachment_id']);
    expect((await sites.globex.as.admin.get<One<Branding>>('/api/branding')).body.data).toMatchObject({ site_name: 'globex', company_name: null });
  });
});
