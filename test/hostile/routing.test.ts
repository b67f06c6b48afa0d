import test from 'ava';
import type { TestGateway } from '../helpers/stack';
import { assertShape, send, world, type Shape } from './kit';

// Every error body, the router's own 404/405/501 and malformed percent-escapes included, comes in
// the endpoint's shape (spec 1 section 7): one error handler, one path policy before every router.

let gw: TestGateway;
let key: string;
test.before(async () => {
  ({ gw, key } = await world());
});
test.after.always(async () => gw?.close());

const WRONG_METHOD: Array<[string, string, Shape, string[]]> = [
  ['PUT', '/v1/key/balance', 'openai', ['GET']],
  ['POST', '/v1/key/balance', 'openai', ['GET']],
  ['DELETE', '/v1/chat/completions', 'openai', ['POST']],
  ['GET', '/v1/chat/completions', 'openai', ['POST']],
  ['GET', '/v1/messages', 'messages', ['POST']],
  ['PUT', '/v1/messages', 'messages', ['POST']],
  ['PUT', '/v1/responses', 'openai', ['POST']],
  ['GET', '/v1beta/models/gemini-2.5-pro:generateContent', 'generate-content', ['POST']],
  ['DELETE', '/v1beta/models/gemini-2.5-pro:streamGenerateContent', 'generate-content', ['POST']],
  ['PUT', '/v1/models/gemini-2.5-pro:generateContent', 'generate-content', ['POST']],
  ['PATCH', '/v1/images/generations', 'openai', ['POST']],
  ['PUT', '/v1/images/edits', 'openai', ['POST']],
  ['PUT', '/v1/videos/generations', 'openai', ['POST']],
  ['DELETE', '/v1/music/generations', 'openai', ['POST']],
  ['PUT', '/v1/audio/speech', 'openai', ['POST']],
  ['PATCH', '/v1/audio/voices', 'openai', ['POST']],
  ['GET', '/v1/transcripts/extract', 'openai', ['POST']],
  ['PUT', '/v1/videos/avatars', 'openai', ['POST']],
  ['POST', '/v1/videos/clip-templates', 'openai', ['GET']],
  ['POST', '/api/v1/usage', 'openai', ['GET']],
  ['GET', '/v1/embeddings', 'openai', ['POST']],
  ['PUT', '/v1/dashboard/billing/subscription', 'openai', ['GET']],
  ['POST', '/api/v1/models/public', 'openai', ['GET']],
  ['PUT', '/admin/v1/accounts', 'openai', ['POST']],
  ['POST', '/healthz', 'openai', ['GET']],
];

test('a wrong method on a known route: 405 in the endpoint shape, with Allow', async (t) => {
  for (const [method, path, shape, allowed] of WRONG_METHOD) {
    const r = await send(gw, method, path, { key });
    t.is(r.status, 405, `${method} ${path}`);
    assertShape(t, r, shape, `${method} ${path}`);
    const allow = (r.headers.get('allow') ?? '').split(/,\s*/);
    for (const m of allowed) t.true(allow.includes(m), `${method} ${path}: Allow ${r.headers.get('allow')}`);
    t.truthy(r.headers.get('x-gateway-trace'));
  }
});

test('a method no route knows: an error in the endpoint shape, not plain text', async (t) => {
  for (const [path, shape] of [['/v1/key/balance', 'openai'], ['/v1/messages', 'messages'], ['/v1beta/models/g:generateContent', 'generate-content']] as const) {
    const r = await send(gw, 'PROPFIND', path, { key });
    t.true(r.status === 405 || r.status === 501, `${path}: ${r.status}`);
    assertShape(t, r, shape, path);
  }
});

test('unknown routes: 404 in the shape of their family', async (t) => {
  const cases: Array<[string, string, Shape]> = [
    ['GET', '/v1/nothing-here', 'openai'],
    ['POST', '/v1/chat/completions/extra', 'openai'],
    ['POST', '/v1/messages/nothing-here', 'messages'],
    ['GET', '/v1beta/models', 'generate-content'],
    ['POST', '/v1beta/models/gemini-2.5-pro:countTokens', 'generate-content'],
    ['POST', '/v1/models/gemini-2.5-pro:embedContent', 'generate-content'],
    ['GET', '/api/v1/nothing', 'openai'],
    ['GET', '/admin/v1/nothing', 'openai'],
    ['GET', '/', 'openai'],
  ];
  for (const [method, path, shape] of cases) {
    const r = await send(gw, method, path, { key, body: method === 'POST' ? {} : undefined });
    t.is(r.status, 404, `${method} ${path}: ${r.text}`);
    assertShape(t, r, shape, path);
  }
});

test('/v1/models/{id} other than Google methods stays in the OpenAI shape', async (t) => {
  // OpenAI model ids may hold colons: a registry entry (404 here: no such model), not a Google method.
  const r = await send(gw, 'GET', '/v1/models/ft:gpt-4o:acme', { key });
  t.is(r.status, 404, r.text);
  assertShape(t, r, 'openai');
});

test('/v1/models/{x} and the avatar presets: Allow names exactly the methods of the resource the path is', async (t) => {
  const cases: Array<[string, string, Shape, string]> = [
    // A registry entry: GET (and HEAD) only.
    ['POST', '/v1/models/gpt-5.1', 'openai', 'GET, HEAD'],
    ['PUT', '/v1/models/gpt-5.1', 'openai', 'GET, HEAD'],
    ['POST', '/v1/models/ft:gpt-4o:acme', 'openai', 'GET, HEAD'],
    // One of Google's methods: POST only.
    ['GET', '/v1/models/gemini-2.5-pro:generateContent', 'generate-content', 'POST'],
    ['DELETE', '/v1/models/gemini-2.5-pro:streamGenerateContent', 'generate-content', 'POST'],
    ['GET', '/v1/models/gemini-2.5-pro:countTokens', 'generate-content', 'POST'],
    // The avatar presets are a list, not an avatar: no DELETE there.
    ['DELETE', '/v1/videos/avatars/presets', 'openai', 'GET, HEAD'],
    ['PUT', '/v1/videos/avatars/presets', 'openai', 'GET, HEAD'],
    ['PUT', '/v1/videos/avatars/av_123', 'openai', 'DELETE, GET, HEAD'],
  ];
  for (const [method, path, shape, allow] of cases) {
    const r = await send(gw, method, path, { key, body: method === 'POST' ? {} : undefined });
    t.is(r.status, 405, `${method} ${path}: ${r.text}`);
    assertShape(t, r, shape, path);
    const sorted = (list: string) => list.split(/,\s*/).sort().join(', ');
    t.is(sorted(r.headers.get('allow') ?? ''), sorted(allow), `${method} ${path}`);
  }
});

test('malformed percent-escapes in a path: 400 in the endpoint shape, never 500', async (t) => {
  const body = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
  const cases: Array<[string, string, Shape, unknown?]> = [
    ['POST', '/v1beta/models/%ff%fe:generateContent', 'generate-content', body],
    ['POST', '/v1beta/models/gemini%E0%A4%A:streamGenerateContent', 'generate-content', body],
    ['POST', '/v1/models/%ff:generateContent', 'generate-content', body],
    ['POST', '/v1beta/models/%:generateContent', 'generate-content', body],
    ['GET', '/v1/images/generations/%c0%af', 'openai'],
    ['GET', '/v1/videos/generations/task_%ZZ', 'openai'],
    ['GET', '/v1/audio/speech/%E0%A4%A', 'openai'],
    ['DELETE', '/v1/videos/avatars/%ff', 'openai'],
    ['GET', '/v1/videos/clip-templates/%', 'openai'],
    ['GET', '/admin/v1/keys/%ff', 'openai'],
  ];
  for (const [method, path, shape, b] of cases) {
    const r = await send(gw, method, path, { key, body: b, headers: path.startsWith('/admin') ? { authorization: `Bearer ${gw.config.ADMIN_TOKEN}` } : {} });
    t.is(r.status, 400, `${method} ${path}: ${r.text}`);
    assertShape(t, r, shape, path);
    if (shape === 'openai') t.is(r.json?.error?.code, 'invalid_request', path);
  }
});

test('well-formed escapes still reach the route, decoded once', async (t) => {
  // `%2D` is `-`: the model id arrives decoded, and is not decoded a second time.
  const r = await send(gw, 'POST', '/v1beta/models/gemini%2D2.5%2Dpro:generateContent', { key, body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } });
  t.is(r.status, 200, r.text);
  const twice = await send(gw, 'POST', '/v1beta/models/gemini%252D2.5-pro:generateContent', { key, body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } });
  t.is(twice.status, 400, twice.text);
  t.is(twice.json.error.status, 'NOT_FOUND');
});
