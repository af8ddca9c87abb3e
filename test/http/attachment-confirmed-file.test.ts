import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { request, type ClientRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useOneSite } from '../support/one-site.ts';
import { waitFor } from '../support/wait-for.ts';

/**
 * What confirmation checked is what downloads serve: an upload URL stays valid until it expires, but once the
 * attachment is ready no upload through it, even one already streaming when confirmation ran, replaces the file.
 */
type One<T> = { data: T };
type Presigned = { attachment_id: string; upload: { url: string; headers: Record<string, string> } };
type Answer = { status: number; headers: IncomingHttpHeaders; body: Buffer };

/** A real 1×1 PNG, and another file of the same size and signature that confirmation would have accepted as well. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const FORGED = Buffer.concat([PNG.subarray(0, 16), Buffer.alloc(PNG.length - 16, 0x41)]);

let directory: string;
// Registered before the site, so it runs after its server has closed.
afterAll(() => rm(directory, { recursive: true, force: true }));
const sites = useOneSite(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'attachment-confirmed-'));
  return { ATTACHMENT_DIR: directory };
});

/** Opens a transfer to a signed URL on the test server (with the site's Host); the caller writes and ends the body. */
function open(url: string, method: 'PUT' | 'GET', headers: Record<string, string>): { req: ClientRequest; answer: Promise<Answer> } {
  const target = new URL(url);
  let req!: ClientRequest;
  const answer = new Promise<Answer>((resolve, reject) => {
    req = request({ host: '127.0.0.1', port: sites.server.port, method, path: `${target.pathname}${target.search}`, headers: { host: `acme.localhost:${sites.server.port}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
  });
  return { req, answer };
}

function send(url: string, method: 'PUT' | 'GET', body: Buffer | null, headers: Record<string, string> = {}): Promise<Answer> {
  const { req, answer } = open(url, method, { ...(body ? { 'content-length': String(body.length) } : {}), ...headers });
  req.end(body ?? undefined);
  return answer;
}

const code = (answer: Answer) => (JSON.parse(answer.body.toString()) as { code?: string }).code;

async function presign(): Promise<Presigned> {
  const answer = await sites.acme.as.driver.post<One<Presigned>>('/api/attachment/presign', { file_name: 'proof.png', content_type: 'image/png', size: PNG.length });
  expect(answer.status, answer.text).toBe(201);
  return answer.body.data;
}

async function download(attachmentId: string): Promise<Answer> {
  const record = await sites.acme.as.driver.get<One<{ remote_url: string }>>(`/api/attachment?id=${attachmentId}`);
  return send(record.body.data.remote_url, 'GET', null);
}

const partFiles = async () => (await readdir(path.join(directory, sites.acme.site.id))).filter((name) => name.endsWith('.part'));

describe('a confirmed attachment keeps the file confirmation checked', () => {
  it('an upload still streaming when the attachment is confirmed is refused, and the checked file is served', async () => {
    const { attachment_id, upload } = await presign();
    expect((await send(upload.url, 'PUT', PNG, upload.headers)).status).toBe(200);

    // A second upload through the same URL starts while the attachment is pending, and is still sending its body...
    const late = open(upload.url, 'PUT', { ...upload.headers, 'content-length': String(FORGED.length) });
    late.req.write(FORGED.subarray(0, 20));
    await waitFor('the late upload to be streaming', async () => (await partFiles()).length > 0);
    // ...when the first one is confirmed.
    const confirmed = await sites.acme.as.driver.post<One<{ status: string }>>('/api/attachment/confirm', { attachment_id });
    expect([confirmed.status, confirmed.body.data.status]).toEqual([200, 'ready']);
    late.req.end(FORGED.subarray(20));
    const refused = await late.answer;
    expect([refused.status, code(refused)]).toEqual([409, 'ATTACHMENT_ALREADY_CONFIRMED']);

    const served = await download(attachment_id);
    expect(served.status).toBe(200);
    expect(served.body.equals(PNG)).toBe(true);
    expect(await partFiles()).toEqual([]);
    // And an upload that starts after confirmation is refused at once.
    const after = await send(upload.url, 'PUT', FORGED, upload.headers);
    expect([after.status, code(after)]).toEqual([409, 'ATTACHMENT_ALREADY_CONFIRMED']);
    expect((await download(attachment_id)).body.equals(PNG)).toBe(true);
  });

  it('uploads and downloads answer with x-request-id, the caller’s when it sends one, as every API response', async () => {
    const { attachment_id, upload } = await presign();
    const uploaded = await send(upload.url, 'PUT', PNG, { ...upload.headers, 'x-request-id': 'upload-42' });
    expect([uploaded.status, uploaded.headers['x-request-id']]).toEqual([200, 'upload-42']);
    expect((await sites.acme.as.driver.post('/api/attachment/confirm', { attachment_id })).status).toBe(200);
    const record = await sites.acme.as.driver.get<One<{ remote_url: string }>>(`/api/attachment?id=${attachment_id}`);
    const file = await send(record.body.data.remote_url, 'GET', null, { 'x-request-id': 'download-42' });
    expect([file.status, file.headers['x-request-id'], file.body.equals(PNG)]).toEqual([200, 'download-42', true]);
    const tampered = await send(record.body.data.remote_url.replace(/signature=[^&]+/, 'signature=AAAA'), 'GET', null);
    expect([tampered.status, code(tampered)]).toEqual([403, 'INVALID_SIGNATURE']);
    expect(tampered.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
