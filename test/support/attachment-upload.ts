import { request } from 'node:http';
import type { ApiClient } from './http-client.ts';
import type { TestServer } from './test-server.ts';

/** A real 1×1 PNG. */
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** Sends raw bytes to a signed upload URL on the test server (its path and query, with the site's Host). */
function upload(server: TestServer, subdomain: string, url: string, headers: Record<string, string>): Promise<number> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: 'PUT',
        path: `${target.pathname}${target.search}`,
        headers: { host: `${subdomain}.localhost:${server.port}`, 'content-length': String(PNG.length), ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(PNG);
  });
}

/**
 * Presigns, uploads and confirms a PNG as `client` on the site `subdomain` (a server with local attachment storage):
 * a ready attachment, uploaded by the client's user. @returns its id
 */
export async function uploadReadyPng(server: TestServer, subdomain: string, client: ApiClient): Promise<string> {
  type Presigned = { data: { attachment_id: string; upload: { url: string; headers: Record<string, string> } } };
  const presigned = await client.post<Presigned>('/api/attachment/presign', { file_name: 'proof.png', content_type: 'image/png', size: PNG.length, purpose: 'proof_of_delivery' });
  if (presigned.status !== 201) throw new Error(`presign failed: ${presigned.status} ${presigned.text}`);
  const { attachment_id, upload: target } = presigned.body.data;
  const stored = await upload(server, subdomain, target.url, target.headers);
  if (stored !== 200) throw new Error(`upload failed: ${stored}`);
  const confirmed = await client.post('/api/attachment/confirm', { attachment_id });
  if (confirmed.status !== 200) throw new Error(`confirm failed: ${confirmed.status} ${confirmed.text}`);
  return attachment_id;
}
