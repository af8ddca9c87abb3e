import { request } from 'node:http';
import type { Target } from './load.ts';

/**
 * One request (a GET, or a POST of `body` as JSON), outside the load: before it, so a misconfigured target fails with its status and body in the
 * message (autocannon only counts non-2xx) and the list call is known to return a full page; and after each run,
 * to drain the server (see load.ts).
 * @returns the parsed JSON body
 * @throws on a non-2xx answer
 */
export function probe(target: Target, body?: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const sent = body === undefined ? undefined : JSON.stringify(body);
    const headers = sent === undefined ? target.headers : { ...target.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(sent)) };
    const req = request({ host: '127.0.0.1', port: target.port, path: target.path, method: sent === undefined ? 'GET' : 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) reject(new Error(`probe of ${target.name} (${target.path}) answered ${status}: ${text}`));
        else resolve(JSON.parse(text));
      });
    });
    req.on('error', reject);
    req.end(sent);
  });
}
