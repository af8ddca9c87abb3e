import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_OPERATIONS } from '../../http/operations/all-operations.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

type Document = { paths: Record<string, Record<string, { operationId: string }>> };

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

  it('serves an offline reference page with its assets', async () => {
    const page = await server.client(null).get('/docs');
    expect(page.status).toBe(200);
    expect(page.text).toContain('/docs/assets/swagger-ui-bundle.js');
    const bundle = await server.client(null).get('/docs/assets/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(bundle.text.length).toBeGreaterThan(100_000);
  });
});
