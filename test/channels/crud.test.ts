// Channels as managed objects: the seeded list, CRUD and validation through
// /admin/v1/channels, secrets sealed and never shown, and a change applied on
// other running gateways and workers without a restart.
import test from 'ava';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { startGateway, type TestGateway } from '../helpers/stack';
import { buildDeps } from '../../capabilities/bootstrap';
import { createLogger } from '../../platform/logger';
import { createApp } from '../../gateway/app';
import { createWorker } from '../../workers/worker';
import { post, upstreamCount } from '../chat/helpers';

let gw: TestGateway;
let key: string;
test.before(async () => {
  gw = await startGateway({}, { simulator: true });
  key = (await gw.newKey((await gw.newAccount()).id)).key;
});
test.after.always(async () => gw?.close());

const chat = (url: string, model: string) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'which channel?' }], max_tokens: 5 }),
  });

const simChannel = (id: string) => `${gw.simUrl}/ch/${id}`;

const newChannel = (id: string, fields: Record<string, unknown> = {}) => ({
  id, vendor: 'openai', adapter: 'chat-completions', base_url: simChannel(id), credentials: { env: 'UPSTREAM_API_KEY' }, models: ['gpt-4.1'], ...fields,
});

/** Retry `check` until it passes (another process picks the change up from Redis). */
async function eventually(check: () => Promise<boolean>, ms = 8000): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

test.serial('the seed declares each channel once; a channel lists every model it serves', async (t) => {
  const r = await gw.admin('GET', '/channels');
  t.is(r.status, 200);
  const ids = r.body.data.map((c: any) => c.id);
  t.is(new Set(ids).size, ids.length);
  const a = r.body.data.find((c: any) => c.id === 'openai-a');
  t.like(a, { object: 'channel', vendor: 'openai', adapter: 'chat-completions', priority: 0, weight: 1, enabled: true, origin: 'seed' });
  t.deepEqual(a.models.map((m: any) => m.model), ['gpt-5.1', 'gpt-5-mini', 'gpt-4.1']);
  t.deepEqual(a.credentials, { type: 'env', env: 'UPSTREAM_API_KEY', configured: true });
  t.deepEqual(a.capabilities, { 'chat-completions': ['web_search'] });
  t.is(a.health.state, 'closed');
  const dh = r.body.data.find((c: any) => c.id === 'dh-a');
  t.like(dh.models.find((m: any) => m.model === 'dh-avatar-create'), { adapter: 'dh-avatar' });
  // The public matrix still reads off the channels.
  const pub: any = await (await fetch(`${gw.url}/api/v1/models/public`)).json();
  t.like(pub.data.find((m: any) => m.id === 'claude-sonnet-4-5').protocols, { messages: 'native', 'chat-completions': 'translated', responses: 'upstream-converted', 'generate-content': 'none' });
});

test.serial('validation: each bad field is one 400 naming it, in the management API shape', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [newChannel('Bad Id'), 'id'],
    [newChannel('x1', { adapter: 'telepathy' }), 'adapter'],
    [newChannel('x2', { base_url: 'ftp://example.com' }), 'base_url'],
    [newChannel('x3', { credentials: { env: 'PATH' } }), 'credentials'],
    [newChannel('x4', { models: ['no-such-model'] }), 'models[0].model'],
    [newChannel('x5', { protocols: { messages: 'native' } }), 'protocols.messages'],
    [newChannel('x6', { models: ['gpt-image-1'] }), 'models[0].model'],
    [newChannel('x7', { adapter: 'ark-video', models: ['seedance-1-0-pro'], protocols: { 'chat-completions': 'native' } }), 'protocols.chat-completions'],
    [newChannel('x8', { priority: -1 }), 'priority'],
    [newChannel('x9', { surprise: true }), ''],
    [newChannel('x10', { models: ['gpt-4.1', 'gpt-4.1'] }), 'models[1].model'],
  ];
  for (const [body, param] of cases) {
    const r = await gw.admin('POST', '/channels', body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_request');
    t.true(typeof r.body.error.message === 'string' && r.body.error.message.length > 0);
    if (param) t.true(String(r.body.error.param ?? '').startsWith(param.split('[')[0]), `${param} vs ${r.body.error.param}: ${r.body.error.message}`);
  }
  t.is((await gw.admin('GET', '/channels')).body.data.filter((c: any) => /^x\d/.test(c.id)).length, 0);
  t.is((await gw.admin('GET', '/channels/nope')).status, 404);
  t.is((await gw.admin('PATCH', '/channels/nope', { enabled: false })).status, 404);
  t.is((await gw.admin('PATCH', '/channels/openai-a', { id: 'renamed' })).status, 400);
  t.is((await gw.admin('POST', '/channels', newChannel('openai-a'))).status, 409);
  const anon = await fetch(`${gw.url}/admin/v1/channels`);
  t.is(anon.status, 401);
});

test.serial('create, route, edit, disable, delete: each change is live on the next request', async (t) => {
  await gw.control('POST', '/reset');
  // Highest weight at priority 0: first on gpt-4.1's ladder.
  const c = await gw.admin('POST', '/channels', newChannel('fresh-a', { weight: 1000, models: [{ model: 'gpt-4.1', upstream_model: 'gpt-4.1-2025-04-14' }] }));
  t.is(c.status, 201, JSON.stringify(c.body));
  t.like(c.body, { id: 'fresh-a', origin: 'api', enabled: true, weight: 1000 });
  t.is((await chat(gw.url, 'gpt-4.1')).status, 200);
  t.is(await upstreamCount(gw, 'fresh-a'), 1);
  const seen = (await gw.control('GET', '/requests?channel=fresh-a')).requests[0];
  t.is(seen.body.model, 'gpt-4.1-2025-04-14', 'the upstream gets the mapped model name');
  // Other models are untouched.
  t.is((await chat(gw.url, 'gpt-5.1')).status, 200);
  t.is(await upstreamCount(gw, 'fresh-a'), 1);

  const p = await gw.admin('PATCH', '/channels/fresh-a', { enabled: false, note: 'maintenance' });
  t.is(p.status, 200);
  t.like(p.body, { enabled: false, note: 'maintenance' });
  t.is((await chat(gw.url, 'gpt-4.1')).status, 200);
  t.is(await upstreamCount(gw, 'fresh-a'), 1);
  t.is(await upstreamCount(gw, 'openai-a'), 2);

  await gw.admin('PATCH', '/channels/fresh-a', { enabled: true });
  t.is((await chat(gw.url, 'gpt-4.1')).status, 200);
  t.is(await upstreamCount(gw, 'fresh-a'), 2);

  const d = await gw.admin('DELETE', '/channels/fresh-a');
  t.is(d.status, 200);
  t.true(d.body.deleted);
  t.is((await gw.admin('GET', '/channels/fresh-a')).status, 404);
  t.is((await chat(gw.url, 'gpt-4.1')).status, 200);
  t.is(await upstreamCount(gw, 'fresh-a'), 2);
  // A deleted id may be created again.
  t.is((await gw.admin('POST', '/channels', newChannel('fresh-a', { enabled: false }))).status, 201);
  await gw.admin('DELETE', '/channels/fresh-a');

  // Disabling every channel of a model: 503 no_channel_available, in the endpoint's shape.
  for (const id of ['qwen-a', 'qwen-b', 'qwen-c']) t.is((await gw.admin('PATCH', `/channels/${id}`, { enabled: false })).status, 200);
  const none = await chat(gw.url, 'qwen3-max');
  t.is(none.status, 503);
  t.is(((await none.json()) as any).error.code, 'no_channel_available');
  for (const id of ['qwen-a', 'qwen-b', 'qwen-c']) await gw.admin('PATCH', `/channels/${id}`, { enabled: true });
  t.is((await chat(gw.url, 'qwen3-max')).status, 200);
});

test.serial('a secret is sealed, sent upstream, and never returned', async (t) => {
  await gw.control('POST', '/reset');
  const secret = 'sk-live-channel-secret-0123456789abcdef';
  const c = await gw.admin('POST', '/channels', newChannel('secret-a', { weight: 1000, credentials: { secret } }));
  t.is(c.status, 201);
  t.deepEqual(c.body.credentials, { type: 'secret', hint: '…cdef' });
  const shown = [
    JSON.stringify(c.body),
    JSON.stringify((await gw.admin('GET', '/channels/secret-a')).body),
    JSON.stringify((await gw.admin('GET', '/channels')).body),
    JSON.stringify((await gw.admin('PATCH', '/channels/secret-a', { weight: 999 })).body),
  ];
  for (const s of shown) t.false(s.includes(secret) || s.includes('0123456789'), s.slice(0, 200));
  // At rest: sealed (AES-256-GCM), no plaintext in the document.
  const doc = await gw.deps.db.Channel.findById('secret-a').lean();
  t.false(JSON.stringify(doc).includes(secret));
  t.is((doc!.doc as any).credentials.type, 'secret');
  // In use: the upstream gets it.
  t.is((await chat(gw.url, 'gpt-4.1')).status, 200);
  const seen = (await gw.control('GET', '/requests?channel=secret-a')).requests[0];
  t.is(seen.headers.authorization, `Bearer ${secret}`);
  // Rotating it: the next request uses the new one.
  await gw.admin('PATCH', '/channels/secret-a', { credentials: { secret: 'sk-rotated-9999' } });
  t.is((await chat(gw.url, 'gpt-4.1')).status, 200);
  t.is((await gw.control('GET', '/requests?channel=secret-a')).requests[1].headers.authorization, 'Bearer sk-rotated-9999');
  await gw.admin('DELETE', '/channels/secret-a');
});

test.serial('a change through one gateway is applied on another running gateway and on a worker, without a restart', async (t) => {
  await gw.control('POST', '/reset');
  // A second gateway process and a worker process: each with its own deps (catalogue cache, breakers).
  const gatewayB = await buildDeps(gw.config, createLogger('silent'));
  const serverB: Server = createApp(gatewayB).listen(0, '127.0.0.1');
  await new Promise((r) => serverB.once('listening', r));
  const urlB = `http://127.0.0.1:${(serverB.address() as AddressInfo).port}`;
  const workerDeps = await buildDeps(gw.config, createLogger('silent'));
  const worker = await createWorker(gw.config, workerDeps);
  const run = worker.worker.run();
  try {
    t.is((await chat(urlB, 'grok-4')).status, 200);
    t.is(await upstreamCount(gw, 'live-chat'), 0);
    // Through gateway A: a new first channel for grok-4 and one for gpt-image-1.
    t.is((await gw.admin('POST', '/channels', newChannel('live-chat', { vendor: 'xai', weight: 1000, models: ['grok-4'] }))).status, 201);
    t.is((await gw.admin('POST', '/channels', { ...newChannel('live-img', { adapter: 'openai-images', weight: 1000, models: ['gpt-image-1'] }) })).status, 201);
    t.true(await eventually(async () => workerDeps.catalogue().channels(workerDeps.catalogue().resolve('gpt-image-1')!, 'task')[0]?.id === 'live-img'));
    // Gateway B routes to it (its cache heard the change).
    t.true(await eventually(async () => {
      t.is((await chat(urlB, 'grok-4')).status, 200);
      return (await upstreamCount(gw, 'live-chat')) > 0;
    }));
    // The worker's submit activity resolves the channel: the task went to live-img.
    const r = await post(gw, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'a live channel', async: true }, { key });
    t.is(r.status, 200, r.text);
    t.true(await eventually(async () => {
      const task = await gw.deps.db.Task.findById(r.json.id).lean();
      return task?.state === 'succeeded';
    }, 20_000));
    const task = await gw.deps.db.Task.findById(r.json.id).lean();
    t.is(task!.upstream!.channel, 'live-img');
    // Disabled through gateway B: gateway A and the worker stop using it.
    t.is((await fetch(`${urlB}/admin/v1/channels/live-chat`, {
      method: 'PATCH', headers: { authorization: `Bearer ${gw.config.ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ enabled: false }),
    })).status, 200);
    t.true(await eventually(async () => gw.deps.catalogue().channels(gw.deps.catalogue().resolve('grok-4')!, 'chat-completions')[0]?.id === 'xai-a'));
    t.true(await eventually(async () => workerDeps.catalogue().channels(workerDeps.catalogue().resolve('grok-4')!, 'chat-completions')[0]?.id === 'xai-a'));
  } finally {
    await gw.admin('DELETE', '/channels/live-chat');
    await gw.admin('DELETE', '/channels/live-img');
    worker.worker.shutdown();
    await run.catch(() => undefined);
    await worker.connection.close();
    serverB.closeAllConnections();
    await new Promise((r) => serverB.close(r));
    await gatewayB.close();
    await workerDeps.close();
  }
});
