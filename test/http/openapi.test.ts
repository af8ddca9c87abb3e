import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_OPERATIONS } from '../../http/operations/all-operations.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

type Document = { paths: Record<string, Record<string, { operationId: string }>> };
type Response = { headers?: Record<string, { schema: { type: string } }>; content?: { 'application/json': { schema: { properties: Record<string, unknown> } } } };
type Described = {
  operationId: string;
  parameters?: { name: string; required: boolean }[];
  requestBody?: { required: boolean };
  responses: Record<string, Response>;
};
type Resolved = { paths: Record<string, Record<string, Described>> };

/** The document with every $ref replaced by what it points to, as a client generator reads it. */
async function resolvedDocument(path: '/openapi.json' | '/openapi-3.0.json'): Promise<Resolved> {
  const response = await server.client(null).get(path);
  return (await SwaggerParser.dereference(structuredClone(response.body) as never)) as unknown as Resolved;
}

/** Every schema object of a document below `node` with the path to it. */
function* schemaNodes(node: unknown, path = ''): Generator<[string, Record<string, unknown>]> {
  if (typeof node !== 'object' || node === null) return;
  if (!Array.isArray(node)) yield [path, node as Record<string, unknown>];
  for (const [key, child] of Object.entries(node)) yield* schemaNodes(child, `${path}/${key}`);
}

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('OpenAPI', () => {
  it('documents every operation the router serves, and only those', async () => {
    const response = await server.client(null).get<Document>('/openapi.json');
    expect(response.status).toBe(200);
    const documented = Object.entries(response.body.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    );
    const served = ALL_OPERATIONS.map((op) => `${op.method} /api${op.path} ${op.id}`);
    expect(documented.sort()).toEqual(served.sort());
    for (const operation of ALL_OPERATIONS) {
      const answer = await server.client('nosite').send(operation.method, `/api${operation.path.replace('{id}', 'x')}`);
      expect(answer.body, `${operation.method} ${operation.path} is routed`).not.toMatchObject({ code: 'ROUTE_NOT_FOUND' });
    }
  });

  it('validates as OpenAPI 3.1 and as the 3.0.3 rendering', async () => {
    const v31 = await server.client(null).get('/openapi.json');
    const v30 = await server.client(null).get('/openapi-3.0.json');
    await expect(SwaggerParser.validate(structuredClone(v31.body) as never)).resolves.toBeTruthy();
    await expect(SwaggerParser.validate(structuredClone(v30.body) as never)).resolves.toBeTruthy();
    expect((v30.body as { openapi: string }).openapi).toBe('3.0.3');
    expect(v30.text).not.toContain('"const"');
  });

  it('requires a body only where the server refuses to go without one, and a query parameter only where it has no default', async () => {
    const document = await resolvedDocument('/openapi.json');
    // A GET takes its fields as query parameters as well (the body is what the spec shows), so the body is optional.
    expect(document.paths['/api/dispatch/available-drivers']!.get!.requestBody!.required).toBe(false);
    // A missing body reads as {}: optional where every field is (a PATCH that changes nothing), required elsewhere.
    expect(document.paths['/api/job/{id}']!.patch!.requestBody!.required).toBe(false);
    expect(document.paths['/api/job']!.post!.requestBody!.required).toBe(true);
    const limit = document.paths['/api/driver/track']!.get!.parameters!.find((p) => p.name === 'limit');
    expect(limit?.required).toBe(false);
  });

  it('names the answers every operation can give: 429 with its headers, 500, and 413 / 415 where a body is read', async () => {
    for (const path of ['/openapi.json', '/openapi-3.0.json'] as const) {
      const document = await resolvedDocument(path);
      for (const operation of Object.values(document.paths).flatMap((methods) => Object.values(methods))) {
        const { responses, operationId } = operation;
        expect(Object.keys(responses['429']!.headers ?? {}).sort(), operationId).toEqual(['RateLimit-Limit', 'RateLimit-Policy', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']);
        expect(responses['429']!.headers!['Retry-After']!.schema.type, operationId).toBe('integer');
        expect(responses['500']!.content!['application/json'].schema.properties, operationId).toHaveProperty('code');
        const bodyErrors = operation.requestBody ? ['413', '415'] : [];
        expect(Object.keys(responses).filter((status) => status === '413' || status === '415'), operationId).toEqual(bodyErrors);
      }
    }
  });

  it('gives every nullable schema of the 3.0 document a type, with null among its values where it lists them', async () => {
    const v30 = await server.client(null).get('/openapi-3.0.json');
    const lacking = [...schemaNodes(v30.body)].filter(([, node]) => node.nullable === true && (typeof node.type !== 'string' || (Array.isArray(node.enum) && !node.enum.includes(null))));
    expect(lacking.map(([path]) => path)).toEqual([]);
    const document = await resolvedDocument('/openapi-3.0.json');
    type Entry = { properties: Record<string, unknown> };
    const entry = (document.paths['/api/dispatch/available-drivers']!.get!.responses['200']!.content!['application/json'].schema.properties.data as { items: Entry }).items;
    expect(entry.properties.unavailable_reason).toEqual({ type: 'string', enum: ['inactive', 'off_schedule', 'has_conflict', 'capacity', 'not_available', null], nullable: true });
  });

  it('serves an offline reference page with its assets', async () => {
    const page = await server.client(null).get('/docs');
    expect(page.status).toBe(200);
    expect(page.text).toContain('/docs/assets/swagger-ui-bundle.js');
    const bundle = await server.client(null).get('/docs/assets/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(bundle.text.length).toBeGreaterThan(100_000);
  });
});
