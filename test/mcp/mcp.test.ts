import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { createJob } from '../support/job-fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { runConnectorRaw, startConnector, type Connector } from './connector-process.ts';
import { startFakeListApi } from './fake-list-api.ts';

/**
 * The record the agent flow creates. Jobs do not exist yet: when they do, point this at job creation and the
 * flow test below stays as it is.
 */
const CREATE_CASE = {
  search: 'create job with stops',
  operationId: 'job.create',
  route: 'POST /job',
  bodyField: 'customer_notes' as const,
  body: {
    customer_email: 'agent-customer@shop.example',
    customer_notes: 'booked by an AI agent',
    stops: [
      { type: 'pickup', street_address: '1 Connector Way', city: 'Springfield', point: { lat: 40.1, lng: -75.2 } },
      { type: 'dropoff', street_address: '9 Protocol Ave', city: 'Springfield', point: { lat: 40.2, lng: -75.1 } },
    ],
  },
  readBack: (id: string) => `/api/job/${id}`,
};

const SITE = 'mcpsite';

/** A connector to the stand-in API that waits half a second for an answer. */
const timeoutConnector = (port: number) => startConnector({ SVC_API_URL: `http://bulk.localhost:${port}`, SVC_API_KEY: site.keys.admin, SVC_API_TIMEOUT_MS: '500' });
let server: TestServer;
let site: SiteFixture;
let admin: Connector;
let siteUrl: string;

beforeAll(async () => {
  server = await startTestServer();
  site = await createSiteFixture(server, SITE);
  siteUrl = `http://${SITE}.localhost:${server.port}`;
  admin = await startConnector({ SVC_API_URL: siteUrl, SVC_API_KEY: site.keys.admin });
});
afterAll(async () => {
  await admin?.close();
  await server?.close();
});

describe('MCP connector (real process over stdio, real API)', () => {
  it('lists exactly the four tools, each with an input schema', async () => {
    const { tools } = await admin.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['call_api', 'describe_api', 'read_api_result', 'search_api']);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(Object.keys(tool.inputSchema.properties ?? {}).length).toBeGreaterThan(0);
    }
  });

  it('creates a record through search, describe and call that then exists over REST', async () => {
    const search = await admin.call('search_api', { query: CREATE_CASE.search });
    const [best] = search.data.operations as { operationId: string; method: string; path: string }[];
    expect(best?.operationId).toBe(CREATE_CASE.operationId);

    const described = await admin.call('describe_api', { operation: best?.operationId });
    const input = described.data.input as { body: { properties: Record<string, unknown> } };
    expect(input.body.properties).toHaveProperty(CREATE_CASE.bodyField);
    const byRoute = await admin.call('describe_api', { operation: CREATE_CASE.route });
    expect(byRoute.data.operationId).toBe(CREATE_CASE.operationId);

    const created = await admin.call('call_api', { operation: `${best?.method} ${best?.path}`, body: CREATE_CASE.body });
    expect(created.isError).toBe(false);
    expect(created.data.status).toBe(201);
    const id = (created.data.body as { data: { id: string } }).data.id;

    const readBack = await site.as.admin.get<{ data: Record<string, unknown> }>(CREATE_CASE.readBack(id));
    expect(readBack.status).toBe(200);
    expect(readBack.body.data).toMatchObject({ id, [CREATE_CASE.bodyField]: CREATE_CASE.body[CREATE_CASE.bodyField] });
  });

  it('refuses a driver key through MCP exactly as over HTTP: a tool error carrying 403 FORBIDDEN', async () => {
    const overHttp = await site.as.driver.get('/api/audit/search');
    expect(overHttp.status).toBe(403);

    const driver = await startConnector({ SVC_API_URL: siteUrl, SVC_API_KEY: site.keys.driver });
    try {
      const answer = await driver.call('call_api', { operation: 'GET /api/audit/search' });
      expect(answer.isError).toBe(true);
      expect(answer.data).toMatchObject({ status: 403, code: 'FORBIDDEN' });
      expect(String(answer.data.error)).toContain('audit.read');
    } finally {
      await driver.close();
    }
  });

  it('answers API validation failures as tool errors and keeps serving', async () => {
    const answer = await admin.call('call_api', { operation: CREATE_CASE.operationId, body: { unknown_field: 1 } });
    expect(answer.isError).toBe(true);
    expect(answer.data).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    const unknown = await admin.call('describe_api', { operation: 'no.such.operation' });
    expect(unknown).toMatchObject({ isError: true, data: { code: 'UNKNOWN_OPERATION' } });
    expect((await admin.client.listTools()).tools).toHaveLength(4);
  });

  it('sends a body on a GET only where the API documents one (available drivers, as the spec shows it)', async () => {
    const job = await createJob(site.as.dispatcher);
    const described = await admin.call('describe_api', { operation: 'GET /api/dispatch/available-drivers' });
    expect((described.data.input as { body: { properties: Record<string, unknown> } }).body.properties).toHaveProperty('job_id');
    const drivers = await admin.call('call_api', { operation: 'GET /api/dispatch/available-drivers', body: { job_id: job.id } });
    expect(drivers).toMatchObject({ isError: false, data: { status: 200 } });
    const refused = await admin.call('call_api', { operation: 'GET /api/audit/search', body: { q: 'x' } });
    expect(refused).toMatchObject({ isError: true, data: { code: 'BODY_NOT_ALLOWED' } });
  });

  it('reads a query written into the operation reference, as the spec writes some operations; `query` wins', async () => {
    const job = await createJob(site.as.dispatcher);
    await createJob(site.as.dispatcher);
    const one = await admin.call('call_api', { operation: 'GET /api/job?per_page=1' });
    expect(one).toMatchObject({ isError: false, data: { status: 200 } });
    expect((one.data.body as { data: unknown[] }).data).toHaveLength(1);
    const two = await admin.call('call_api', { operation: 'GET /api/job?per_page=1', query: { per_page: 2 } });
    expect((two.data.body as { data: unknown[] }).data).toHaveLength(2);
    const byId = await admin.call('call_api', { operation: `GET /api/job/${job.id}?unused=1` });
    expect(byId).toMatchObject({ isError: false, data: { status: 200, body: { data: { id: job.id } } } });
  });

  it('answers an unreachable API with a tool error, not a crash', async () => {
    const fake = await startFakeListApi(0);
    await fake.close();
    const orphan = await startConnector({ SVC_API_URL: `http://gone.localhost:${fake.port}`, SVC_API_KEY: site.keys.admin });
    try {
      const answer = await orphan.call('search_api', { query: 'address' });
      expect(answer.isError).toBe(true);
      expect(answer.data.code).toBe('OPENAPI_UNAVAILABLE');
      expect(String(answer.data.error)).toContain('ECONNREFUSED');
    } finally {
      await orphan.close();
    }
  });

  it('stores a 5,000-item result and reads it back completely in pages', async () => {
    const fake = await startFakeListApi(5_000);
    const connector = await startConnector({ SVC_API_URL: `http://bulk.localhost:${fake.port}`, SVC_API_KEY: site.keys.admin });
    try {
      const called = await connector.call('call_api', { operation: 'item.list' });
      expect(called.data).toMatchObject({ status: 200, items_path: '/data', item_count: 5_000 });
      expect(called.data.first_items).toHaveLength(3);
      const resultId = called.data.result_id;
      expect(resultId).toEqual(expect.any(String));

      const ids: number[] = [];
      let offset: number | null = 0;
      while (offset !== null) {
        const page = await connector.call('read_api_result', { result_id: resultId, path: '/data', offset, limit: 250 });
        expect(page.data.total).toBe(5_000);
        ids.push(...(page.data.items as { id: number }[]).map((item) => item.id));
        offset = page.data.next_offset as number | null;
      }
      expect(ids).toEqual(Array.from({ length: 5_000 }, (_, i) => i));
      const total = await connector.call('read_api_result', { result_id: resultId, path: '/total' });
      expect(total.data.value).toBe(5_000);
      const busy = await connector.call('call_api', { operation: 'item.list', query: { busy: 1 } });
      expect(busy).toMatchObject({ isError: true, data: { status: 429, code: 'RATE_LIMITED', retry_after_s: 7 } });
      // The document is fetched once, on first use, however many tools need it.
      await connector.call('describe_api', { operation: 'GET /items' });
      expect(fake.requests.filter((request) => request.path === '/openapi.json')).toHaveLength(1);
      // The *.localhost name was reached on 127.0.0.1 with the site's Host header and the key.
      expect(fake.requests.find((request) => request.path === '/api/items')?.headers).toMatchObject({ host: `bulk.localhost:${fake.port}`, 'x-api-key': site.keys.admin });
      const lost = await timeoutConnector(fake.port);
      try {
        // A write sent in full with no answer may have been made: not a plain network error.
        const unanswered = await lost.call('call_api', { operation: 'item.create', body: { name: 'x' } });
        expect(unanswered).toMatchObject({ isError: true, data: { code: 'OUTCOME_UNKNOWN' } });
      } finally {
        await lost.close();
      }
    } finally {
      await connector.close();
      await fake.close();
    }
  });

  it('writes nothing but JSON-RPC messages to stdout', async () => {
    const run = await runConnectorRaw({ SVC_API_URL: siteUrl, SVC_API_KEY: site.keys.admin }, [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'call_api', arguments: { operation: 'address.search' } } },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'call_api', arguments: { operation: 'GET /api/nothing' } } },
    ]);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n').filter((line) => line.length > 0);
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    expect(run.stdout.endsWith('\n')).toBe(true);
  });

  it('exits non-zero with a message on stderr and nothing on stdout when the env is missing', async () => {
    const run = await runConnectorRaw({});
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('SVC_API_URL');
    expect(run.stderr).toContain('SVC_API_KEY');
  });

  it('exits non-zero naming the malformed variable', async () => {
    const run = await runConnectorRaw({ SVC_API_URL: 'demo.localhost:3000/x', SVC_API_KEY: 'not-a-key' });
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/SVC_API_URL .*(not a valid URL|http or https)/);
    expect(run.stderr).toContain('SVC_API_KEY is malformed');
  });
});
