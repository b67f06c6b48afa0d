import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';

let gw: TestGateway;
let accountId: string;
test.before(async () => {
  gw = await startGateway();
  accountId = (await gw.newAccount()).id;
});
test.after.always(async () => gw?.close());

const models = async (key: string) =>
  ((await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as { object: string; data: Array<{ id: string; object: string; created: number; owned_by: string }> });

test('GET /v1/models lists every registry entry incl. media, embeddings and placeholders', async (t) => {
  const k = await gw.newKey(accountId);
  const list = await models(k.key);
  t.is(list.object, 'list');
  const ids = list.data.map((m) => m.id);
  for (const id of ['gpt-5.1', 'claude-sonnet-4-5', 'gemini-2.5-pro', 'gpt-image-1', 'seedance-1-0-pro', 'dh-avatar', 'dh-lipsync', 'dh-lipsync-pro', 'dh-lipsync-max', 'dh-motion', 'clip-realman', 'clip-mixcut', 'clip-news', 'text-embedding-3-small', 'gpt-5-pro']) {
    t.true(ids.includes(id), id);
  }
  t.deepEqual(list.data.find((m) => m.id === 'gpt-5.1'), { id: 'gpt-5.1', object: 'model', created: 0, owned_by: 'openai' });
});

test('allowed_models filters discovery: null all, [] none, a list only those', async (t) => {
  const all = await gw.newKey(accountId, { allowed_models: null });
  const none = await gw.newKey(accountId, { allowed_models: [] });
  const some = await gw.newKey(accountId, { allowed_models: ['gpt-5.1', 'claude-sonnet-4-5'] });
  t.true((await models(all.key)).data.length > 30);
  t.deepEqual((await models(none.key)).data, []);
  t.deepEqual((await models(some.key)).data.map((m) => m.id).sort(), ['claude-sonnet-4-5', 'gpt-5.1']);
});

test('GET /v1/models/{id}: the entry the list shows this key, by id or alias; 404 otherwise', async (t) => {
  const all = await gw.newKey(accountId);
  const some = await gw.newKey(accountId, { allowed_models: ['claude-sonnet-4-5'] });
  const get = (key: string, id: string, header: Record<string, string> = { authorization: `Bearer ${key}` }) => fetch(`${gw.url}/v1/models/${id}`, { headers: header });
  const entry = await get(all.key, 'gpt-5.1');
  t.is(entry.status, 200);
  t.deepEqual(await entry.json(), { id: 'gpt-5.1', object: 'model', created: 0, owned_by: 'openai' });
  // An alias answers with the entry it names; x-api-key as for the list (Anthropic's SDK).
  const alias = await get(some.key, 'claude-3-5-sonnet-latest', { 'x-api-key': some.key, 'anthropic-version': '2023-06-01' });
  t.is(alias.status, 200);
  t.is(((await alias.json()) as { id: string }).id, 'claude-sonnet-4-5');
  // Placeholders and media SKUs are entries too, as in the list.
  t.is((await get(all.key, 'dh-avatar')).status, 200);
  for (const [key, id] of [[all.key, 'no-such-model'], [some.key, 'gpt-5.1']] as const) {
    const r = await get(key, id);
    t.is(r.status, 404, id);
    const body = (await r.json()) as { error: { code: string; type: string; param: string } };
    t.is(body.error.code, 'model_not_found');
    t.is(body.error.type, 'invalid_request_error');
  }
  // The list's authentication rules: ?key= is refused.
  t.is((await fetch(`${gw.url}/v1/models/gpt-5.1?key=${all.key}`)).status, 401);
  t.is((await fetch(`${gw.url}/v1/models/gpt-5.1`)).status, 401);
});

test('public catalogue needs no auth and carries price, capability, callable and endpoint_type', async (t) => {
  const res = await fetch(`${gw.url}/api/v1/models/public`);
  t.is(res.status, 200);
  const body = (await res.json()) as { data: Array<Record<string, any>> };
  const gpt = body.data.find((m) => m.id === 'gpt-5.1')!;
  t.is(gpt.endpoint_type, 'chat');
  t.true(gpt.callable);
  t.is(gpt.pricing.input_per_1m, 1.25);
  t.true(gpt.capabilities.includes('web_search'));
  t.deepEqual(gpt.protocols, { 'chat-completions': 'native', messages: 'none', responses: 'native', 'generate-content': 'none' });
  const claude = body.data.find((m) => m.id === 'claude-sonnet-4-5')!;
  t.is(claude.protocols['chat-completions'], 'translated');
  t.false(body.data.find((m) => m.id === 'gpt-5-pro')!.callable);
  t.is(body.data.find((m) => m.id === 'text-embedding-3-small')!.endpoint_type, 'embedding');
  // every capability is from the spec's vocabulary
  const vocab = new Set(['tools', 'vision', 'web_search', 'image_gen', 'video_gen', 'thinking', 'json', 'open-source']);
  t.true(body.data.every((m) => m.capabilities.every((c: string) => vocab.has(c))));
});

test('aliases resolve to the current model', (t) => {
  const c = gw.deps.catalogue();
  t.is(c.resolve('claude-3-5-sonnet-latest')?.id, 'claude-sonnet-4-5');
  t.is(c.resolve('gpt-5')?.id, 'gpt-5.1');
  t.is(c.resolve('deepseek-chat')?.id, 'deepseek-v3.2');
  t.is(c.resolve('no-such-model'), undefined);
});

test('POST /v1/embeddings is 404 model_not_found and leaves a rejected usage row with cost 0', async (t) => {
  const k = await gw.newKey(accountId);
  const res = await fetch(`${gw.url}/v1/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'text-embedding-3-small', input: 'hello' }),
  });
  t.is(res.status, 404);
  const body = (await res.json()) as { error: { code: string } };
  t.is(body.error.code, 'model_not_found');
  await gw.flushRows();
  const row = await gw.deps.db.Usage.findById(res.headers.get('x-gateway-trace')).lean();
  t.truthy(row);
  t.is(row!.status, 'rejected');
  t.is(row!.cost_nano, 0);
  t.is(row!.error_code, 'model_not_found');
  t.is(row!.key_id, k.id);
  t.is(row!.model, 'text-embedding-3-small');
  const calls = await gw.admin('GET', `/keys/${k.id}/calls`);
  t.is(calls.body.data.length, 1);
  t.is(calls.body.data[0].cost_usd, '0.00');
});
