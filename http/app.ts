import { H3 } from 'h3';
import type { Services } from '../app/services.ts';
import { mountDocsPage } from './docs-page.ts';
import { ApiError } from './errors.ts';
import { buildOpenApi } from './openapi.ts';
import { toOpenApi30 } from './openapi-3.0.ts';
import type { Operation } from './operation.ts';
import { mountRouteFallback } from './route-fallback.ts';
import { jsonResponse, runOperation } from './run-operation.ts';

/**
 * The h3 application: every operation under /api, plus the OpenAPI documents, the reference page and the health
 * probes. Unknown paths answer 404 and a wrong method 405, in the API's error shape (see route-fallback.ts).
 */
export function createHttpApp(services: Services, operations: Operation[]): H3 {
  const app = new H3();
  const openapi = buildOpenApi(operations, services.config.baseDomain);
  // Serialized once: the documents never change while the process runs (serializing one took ~10 ms a request).
  const openapiJson = JSON.stringify(openapi);
  const openapi30Json = JSON.stringify(toOpenApi30(openapi));
  app.get('/healthz', () => ({ status: 'ok' }));
  app.get('/readyz', async (event) => {
    try {
      await services.db.orm.em.fork().execute('select 1');
      if (services.redis) await services.redis.ping();
      return { status: 'ready', database: services.db.kind, redis: services.redis ? 'up' : 'not configured' };
    } catch {
      event.res.status = 503;
      return new ApiError(503, 'NOT_READY', 'A backing service is unreachable').toBody();
    }
  });
  app.get('/openapi.json', () => jsonResponse(openapiJson));
  app.get('/openapi-3.0.json', () => jsonResponse(openapi30Json));
  mountDocsPage(app);
  for (const operation of operations) {
    const route = `/api${operation.path.replaceAll(/\{(\w+)\}/g, ':$1')}`;
    app.on(operation.method, route, (event) => runOperation(services, operation, event));
  }
  mountRouteFallback(app);
  return app;
}
