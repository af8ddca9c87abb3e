import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { html, type H3 } from 'h3';
import { getAbsoluteFSPath } from 'swagger-ui-dist';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Dispatch engine API reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: true,
      presets: [SwaggerUIBundle.presets.apis], layout: 'BaseLayout' });
  </script>
</body>
</html>`;

/** `/docs`: the API reference rendered by Swagger UI from files shipped in node_modules, so it works offline. */
export function mountDocsPage(app: H3): void {
  const root = getAbsoluteFSPath();
  app.get('/docs', () => html`${PAGE}`);
  app.get('/docs/assets/:file', async (event) => {
    const file = event.context.params?.file ?? '';
    const type = ASSETS[file];
    if (!type) return new Response('not found', { status: 404 });
    const body = await readFile(path.join(root, file));
    return new Response(body, { headers: { 'content-type': type, 'cache-control': 'public, max-age=3600' } });
  });
}
