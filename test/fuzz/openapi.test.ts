import test from 'ava';
import { createApp } from '../../gateway/app';
import { startGateway, type TestGateway } from '../helpers/stack';

/**
 * /openapi.json describes every route the gateway serves (and nothing it
 * does not), every `$ref` resolves, and /docs renders it from local files
 * only. A route added without its operation in gateway/openapi/operations/ fails here.
 */

let gw: TestGateway;
let doc: any;

test.before(async () => {
  gw = await startGateway();
  const res = await fetch(`${gw.url}/openapi.json`);
  doc = await res.json();
});

test.after.always(async () => {
  await gw?.close();
});

/** Not part of the API: the console UI, the stand-in payment processor, the reference itself. */
const NOT_API = /^\/(console|_processor|webhooks|docs|openapi\.json)(\/|$)/;

function servedRoutes(): Set<string> {
  const app = createApp(gw.deps);
  const routes = new Set<string>();
  for (const mw of app.middleware as Array<{ router?: { stack: Array<{ methods: string[]; path: string | RegExp; name?: string }> } }>) {
    for (const layer of mw.router?.stack ?? []) {
      // A route whose path is a regular expression carries its template as its name (gateway/routes/model-paths.ts).
      const template = typeof layer.path === 'string' ? layer.path : layer.name ?? String(layer.path);
      const path = template.replace(/:(\w+)/g, '{$1}').replace(/\*(\w+)$/, '{$1}');
      if (NOT_API.test(path)) continue;
      for (const method of layer.methods) {
        if (method === 'HEAD' || method === 'OPTIONS') continue;
        // `/mcp` answers every other method with its own 405; only POST is the API.
        if (path === '/mcp' && method !== 'POST') continue;
        // generate-content: the model and the method share one path segment.
        if (path.endsWith('/models/{target}') && method === 'POST') {
          const base = path.replace('{target}', '{model}');
          routes.add(`POST ${base}:generateContent`);
          routes.add(`POST ${base}:streamGenerateContent`);
          continue;
        }
        routes.add(`${method} ${path}`);
      }
    }
  }
  return routes;
}

function documented(): Set<string> {
  const ops = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(item)) ops.add(`${method.toUpperCase()} ${path}`);
  }
  return ops;
}

test('the document is OpenAPI 3.1 and answers with x-gateway-trace', async (t) => {
  const res = await fetch(`${gw.url}/openapi.json`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /application\/json/);
  t.truthy(res.headers.get('x-gateway-trace'));
  t.is(doc.openapi, '3.1.0');
  t.true(Object.keys(doc.paths).length > 50);
});

test('every route the gateway serves is documented, and every documented operation is served', (t) => {
  const served = servedRoutes();
  const docs = documented();
  t.true(served.size >= 100, `read ${served.size} routes from the routers`);
  t.deepEqual([...served].filter((r) => !docs.has(r)).sort(), [], 'routes missing from gateway/openapi/operations/');
  t.deepEqual([...docs].filter((r) => !served.has(r)).sort(), [], 'documented operations no route serves');
});

test('the response headers the docs promise are described: cost, translation, rate limits, Retry-After', (t) => {
  const chat = doc.paths['/v1/chat/completions'].post.responses;
  for (const h of ['x-gateway-trace', 'x-gateway-cost', 'X-Protocol-Translation', 'X-Protocol-Warning', 'x-ratelimit-remaining-requests']) t.truthy(chat['200'].headers[h], h);
  t.truthy(chat['429'].headers['Retry-After']);
  t.truthy(chat['429'].headers['x-ratelimit-reset-requests']);
  t.truthy(doc.paths['/v1/images/generations'].post.responses['200'].headers['x-gateway-cost-held']);
  for (const name of ['x-gateway-cost', 'Retry-After', 'x-ratelimit-limit-concurrency']) t.truthy(doc.components.headers[name], name);
});

test('every $ref resolves and every operation names the error shape of its family', (t) => {
  const refs: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') refs.push(v);
        else walk(v);
      }
    }
  };
  walk(doc);
  const resolve = (ref: string) => ref.slice(2).split('/').reduce((n: any, k) => n?.[k], doc);
  t.deepEqual(refs.filter((r) => !r.startsWith('#/') || resolve(r) === undefined), []);

  const expected = (path: string) =>
    path === '/v1/messages' || path.startsWith('/v1/messages/') ? 'AnthropicError'
      : path.startsWith('/v1beta/') || /^\/v1\/models\/\{model\}:/.test(path) ? 'GeminiError'
        : path.startsWith('/admin/') ? 'ManagementError'
          : /^\/v1\/(images|videos|music|audio|transcripts)\//.test(path) ? 'MediaError'
            : path === '/mcp' ? 'JsonRpcError'
              : path.startsWith('/api/v1/integrations/dify/') ? 'DifyError' : 'OpenAIError';
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(item)) {
      const ref = op.responses.default?.content?.['application/json']?.schema?.$ref;
      t.is(ref, `#/components/schemas/${expected(path)}`, `${method.toUpperCase()} ${path}`);
      for (const [status, r] of Object.entries(op.responses as Record<string, any>)) {
        t.truthy(r.headers?.['x-gateway-trace'], `${method.toUpperCase()} ${path} ${status} declares x-gateway-trace`);
      }
    }
  }
});

test('/docs renders the document from local files only', async (t) => {
  const page = await fetch(`${gw.url}/docs`);
  t.is(page.status, 200);
  const csp = page.headers.get('content-security-policy') ?? '';
  t.regex(csp, /default-src 'self'/);
  t.regex(csp, /connect-src 'self'/);
  const html = await page.text();
  const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  t.deepEqual(sources.filter((s) => /^(https?:)?\/\//.test(s)), [], 'no absolute URL in the page');
  for (const s of sources.filter((x) => x.startsWith('/docs/'))) {
    const res = await fetch(`${gw.url}${s}`);
    t.is(res.status, 200, s);
  }
  const init = await (await fetch(`${gw.url}/docs/assets/docs.js`)).text();
  t.regex(init, /url: '\/openapi\.json'/);
  t.regex(init, /validatorUrl: null/);
  t.is((await fetch(`${gw.url}/docs/assets/nope.js`)).status, 404);
});
