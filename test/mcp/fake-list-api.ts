import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeListApi = { port: number; requests: { path: string; headers: IncomingHttpHeaders }[]; close(): Promise<void> };

/**
 * A stand-in API with one operation, `item.list` (GET /api/items), answering `{data: [...itemCount items], total}`.
 * The real API caps pages at 100 items, so this is how a result large enough for the store is produced; the
 * connector, not the API, is under test. `GET /api/items?busy=1` answers 429 with `Retry-After: 7`; `POST /api/items`
 * is taken and never answered.
 */
export async function startFakeListApi(itemCount: number): Promise<FakeListApi> {
  const requests: FakeListApi['requests'] = [];
  const items = Array.from({ length: itemCount }, (_, id) => ({ id, name: `item ${id}` }));
  const document = {
    openapi: '3.1.0',
    info: { title: 'Fake list API', version: '1' },
    paths: {
      '/api/items': {
        get: {
          operationId: 'item.list',
          summary: 'List every item',
          tags: ['Items'],
          responses: { '200': { description: 'all items', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
        post: {
          operationId: 'item.create',
          summary: 'Create an item (this stand-in never answers)',
          tags: ['Items'],
          requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
          responses: { '201': { description: 'created', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
    },
  };
  const server = createServer((req, res) => {
    requests.push({ path: req.url ?? '', headers: req.headers });
    // A write the server takes and never answers (a hung handler, a connection lost after the commit).
    if (req.method === 'POST') return;
    if (req.url === '/api/items?busy=1') {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
      res.end(JSON.stringify({ error: 'Too many requests: retry in 7 s', code: 'RATE_LIMITED' }));
      return;
    }
    const body = req.url === '/openapi.json' ? document : req.url === '/api/items' ? { data: items, total: items.length } : undefined;
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { error: 'not found', code: 'ROUTE_NOT_FOUND' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
