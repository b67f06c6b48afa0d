// One resolver for channel secrets (platform/config.ts upstreamApiKey): a chat call, a channel test call and the
// knowledge compiler's LLM call all send the channel's sealed secret, the one key the resolver gives. Before,
// the compiler sent `process.env[api_key_env] || 'gateway'`, never the sealed secret: a 401 at any real vendor.
import test from 'ava';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { startGateway, type TestGateway } from '../helpers/stack';
import { askModelVia } from '../../capabilities/knowledge/llm-chat';
import { upstreamApiKey } from '../../platform/config';

let gw: TestGateway;
let vendor: http.Server;
let vendorUrl: string;
const seen: string[] = [];
const SECRET = `sk-vendor-${randomBytes(16).toString('hex')}`;

test.before(async () => {
  // A vendor that records the key of every call and answers an OpenAI chat completion (a record_page call).
  vendor = http.createServer((req, res) => {
    seen.push(String(req.headers.authorization ?? ''));
    req.resume();
    req.on('end', () => {
      const args = JSON.stringify({ title: 'T', summary: 'S', tags: [], links: [] });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4.1',
        choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: 'ok', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'record_page', arguments: args } }] } }],
        usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
      }));
    });
  });
  vendor.listen(0, '127.0.0.1');
  await new Promise((r) => vendor.once('listening', r));
  vendorUrl = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}/v1`;
  gw = await startGateway({}, { simulator: true });
});
test.after.always(async () => {
  await gw?.close();
  vendor?.close();
});

test('chat calls, channel test calls and the knowledge compiler send the channel\'s sealed secret from the one resolver', async (t) => {
  // Every other channel of gpt-4.1 goes behind the new one.
  const all = (await gw.admin('GET', '/channels')).body.data as Array<{ id: string; models: Array<{ model: string }> }>;
  for (const c of all.filter((c) => c.models.some((m) => m.model === 'gpt-4.1'))) {
    t.is((await gw.admin('PATCH', `/channels/${c.id}`, { priority: 900 })).status, 200);
  }
  const created = await gw.admin('POST', '/channels', {
    id: 'sealed-vendor', vendor: 'openai', adapter: 'chat-completions', base_url: vendorUrl, credentials: { secret: SECRET }, models: ['gpt-4.1'], priority: 0,
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  t.false(JSON.stringify(created.body).includes(SECRET), 'the secret is never shown');

  // The resolver itself: the unsealed secret of the loaded catalogue.
  const channel = gw.deps.catalogue().channels(gw.deps.catalogue().resolve('gpt-4.1')!, 'chat-completions')[0];
  t.is(channel.id, 'sealed-vendor');
  t.is(upstreamApiKey(gw.config, channel), SECRET);

  // 1. a client's chat call
  const key = (await gw.newKey((await gw.newAccount()).id)).key;
  const chat = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
  });
  t.is(chat.status, 200, await chat.clone().text());
  await chat.body?.cancel();
  t.is(seen.at(-1), `Bearer ${SECRET}`);

  // 2. the channel test call
  const before = seen.length;
  const tested = await gw.admin('POST', '/channels/sealed-vendor/test', { model: 'gpt-4.1' });
  t.is(tested.status, 200, JSON.stringify(tested.body));
  t.true(seen.length > before);
  t.is(seen.at(-1), `Bearer ${SECRET}`);

  // 3. the knowledge compiler's LLM call (no billing here: only the key is looked at)
  const n = seen.length;
  const ask = askModelVia({ catalogue: gw.deps.catalogue, upstream: gw.deps.upstream, config: gw.config }, 'gpt-4.1');
  await ask({ pageId: 'p1', filename: 'foxes.md', headingPath: 'Foxes', body: 'Some text about foxes.' }).catch(() => undefined);
  t.true(seen.length > n, 'the compiler called the vendor');
  t.is(seen.at(-1), `Bearer ${SECRET}`);
  t.false(seen.includes('Bearer gateway'));
});

test('no production code reads a channel key from process.env or builds one itself: only the resolver does', (t) => {
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        const src = fs.readFileSync(p, 'utf8');
        if (/process\.env\[[^\]]*api_key_env/.test(src) || /UPSTREAM_KEYS\[[^\]]*api_key_env/.test(src)) offenders.push(p);
      }
    }
  };
  for (const dir of ['gateway', 'services', 'activities', 'knowledge', 'providers', 'workers', 'agents', 'mcp', 'integrations']) if (fs.existsSync(dir)) walk(dir);
  t.deepEqual(offenders, []);
});
