import test from 'ava';
import OpenAI from 'openai';
import { buildDeps } from '../../capabilities/bootstrap';
import { createApp } from '../../gateway/app';
import { createLogger } from '../../platform/logger';
import type { AddressInfo } from 'node:net';
import type { TestGateway } from '../helpers/stack';
import { post, usageRow } from '../chat/helpers';
import { agentModels, agentRedisKeys } from '../../capabilities/agents/store';
import {
  SPREAD_CHANNELS, SPREAD_MODEL, adminAs, channelCounts, clearUpstream, issueKey, newAgent, newEnterprise, seedTeamBase,
  startAgentGateway, upstreamRequests, type Enterprise,
} from './helpers';

let gw: TestGateway;
let ent: Enterprise;

const HANDBOOK = [
  { id: 'pg-vacation', title: 'Vacation policy', summary: 'How many vacation days staff get', body: 'Every employee gets 27 vacation days per year. Unused vacation days carry over until March.' },
  { id: 'pg-expenses', title: 'Expense reports', summary: 'Submitting travel expenses', body: 'Travel expenses are reimbursed within 14 days once the expense report carries receipts.' },
  { id: 'pg-laptop', title: 'Laptop refresh', summary: 'Hardware replacement cycle', body: 'Engineering laptops are replaced every three years by the IT desk.' },
];

test.before(async () => {
  gw = await startAgentGateway();
  ent = await newEnterprise(gw);
  await seedTeamBase(gw, ent.id, 'handbook', HANDBOOK);
});
test.after.always(async () => gw?.close());

const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
const lastBody = async (channel: string) => {
  const reqs = await upstreamRequests(gw, channel);
  return reqs[reqs.length - 1].body;
};

test.serial('persona first, then the pages the question finds, then the client messages; the page ids are on the usage row', async (t) => {
  const agent = await newAgent(gw, ent, { system_prompt: 'You are Acme HR assistant. Be brief.', model_id: 'gpt-5-mini', knowledge_bases: ['handbook'] });
  const { key } = await issueKey(gw, ent, agent.id);
  await clearUpstream(gw);

  const { data, response } = await sdk(key).chat.completions
    .create({ model: 'anything', messages: [{ role: 'system', content: 'Client system rule.' }, { role: 'user', content: 'How many vacation days do I get?' }] })
    .withResponse();
  t.is(data.object, 'chat.completion');
  const sent = await lastBody('openai-a');
  t.is(sent.model, 'gpt-5-mini');
  t.deepEqual(sent.messages[0], { role: 'system', content: 'You are Acme HR assistant. Be brief.' });
  t.is(sent.messages[1].role, 'system');
  t.regex(sent.messages[1].content, /\[page pg-vacation\] Vacation policy/);
  t.regex(sent.messages[1].content, /27 vacation days/);
  t.notRegex(sent.messages[1].content, /pg-laptop/);
  t.deepEqual(sent.messages.slice(2), [{ role: 'system', content: 'Client system rule.' }, { role: 'user', content: 'How many vacation days do I get?' }]);
  const row = await usageRow(gw, response.headers.get('x-gateway-trace')!);
  t.is(row.agent_id, agent.id);
  t.is(row.account_id, ent.id);
  t.is(row.kb_page_ids[0], 'pg-vacation');

  // Another question, other pages.
  await sdk(key).chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'When is my laptop replaced?' }] });
  const second = await lastBody('openai-a');
  t.regex(second.messages[1].content, /\[page pg-laptop\]/);
  t.notRegex(second.messages[1].content, /pg-vacation/);

  // Nothing found: persona only.
  await sdk(key).chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'zebra quokka' }] });
  const third = await lastBody('openai-a');
  t.is(third.messages.length, 2);
  t.is(third.messages[0].content, 'You are Acme HR assistant. Be brief.');
});

test.serial('the injected pages stay within the token budget, and the latest user message is the query (single turn)', async (t) => {
  const big = Array.from({ length: 30 }, (_, i) => ({ id: `pg-big-${i}`, title: `Onboarding chapter ${i}`, body: `onboarding checklist ${'lorem ipsum dolor '.repeat(200)}` }));
  await seedTeamBase(gw, ent.id, 'onboarding', big);
  const agent = await newAgent(gw, ent, { model_id: 'gpt-5-mini', knowledge_bases: ['onboarding', 'handbook'] });
  const { key } = await issueKey(gw, ent, agent.id);
  const { response } = await sdk(key).chat.completions
    .create({ model: 'x', messages: [{ role: 'user', content: 'vacation days?' }, { role: 'assistant', content: 'Which?' }, { role: 'user', content: 'the onboarding checklist' }] })
    .withResponse();
  const sent = await lastBody('openai-a');
  const context: string = sent.messages[1].content;
  t.regex(context, /onboarding checklist/);
  t.notRegex(context, /vacation/i);
  t.true(Buffer.byteLength(context) <= gw.config.AGENT_CONTEXT_TOKENS * 4, `context of ${Buffer.byteLength(context)} bytes`);
  const row = await usageRow(gw, response.headers.get('x-gateway-trace')!);
  t.true(row.kb_page_ids.length >= 1 && row.kb_page_ids.length <= gw.config.AGENT_CONTEXT_PAGES);
  t.true(row.kb_page_ids.every((id: string) => id.startsWith('pg-big-')));
});

test.serial('client tools and functions are dropped; the agent\'s web search is on only where the model has it and the call streams', async (t) => {
  const plain = await newAgent(gw, ent, { model_id: 'gpt-5-mini' });
  const plainKey = (await issueKey(gw, ent, plain.id)).key;
  await sdk(plainKey).chat.completions.create({
    model: 'x', messages: [{ role: 'user', content: 'hi' }],
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }], tool_choice: 'auto',
    // legacy fields
    ...({ functions: [{ name: 'f', parameters: {} }], function_call: 'auto' } as object),
  });
  const sent = await lastBody('openai-a');
  for (const f of ['tools', 'tool_choice', 'functions', 'function_call', 'parallel_tool_calls']) t.false(f in sent, `${f} forwarded`);

  const searching = await newAgent(gw, ent, { model_id: 'gpt-5.1', web_search: true, drawing: true });
  const searchingKey = (await issueKey(gw, ent, searching.id)).key;
  const stream = await sdk(searchingKey).chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'news today' }], stream: true, tools: [{ type: 'function', function: { name: 'f' } }] });
  for await (const _ of stream) void _;
  const streamed = await lastBody('openai-a');
  t.deepEqual(streamed.tools.map((x: any) => x.type).sort(), ['image_generation', 'web_search']);
  await sdk(searchingKey).chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'news today' }] });
  t.false('tools' in (await lastBody('openai-a')), 'built-in tools need a streaming call');

  // A model without web search: the switch has no effect.
  const noSearch = await newAgent(gw, ent, { model_id: 'gpt-5-mini', web_search: true });
  const noSearchKey = (await issueKey(gw, ent, noSearch.id)).key;
  const s2 = await sdk(noSearchKey).chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hello' }], stream: true });
  for await (const _ of s2) void _;
  t.deepEqual((await lastBody('openai-a')).tools?.map((x: any) => x.type) ?? [], []);
});

test.serial('the agent temperature applies when the client sends none; the client value wins otherwise', async (t) => {
  const agent = await newAgent(gw, ent, { model_id: 'gpt-5-mini', temperature: 0.3 });
  const { key } = await issueKey(gw, ent, agent.id);
  await sdk(key).chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] });
  t.is((await lastBody('openai-a')).temperature, 0.3);
  await sdk(key).chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }], temperature: 1.1 });
  t.is((await lastBody('openai-a')).temperature, 1.1);
  await sdk(key).chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }], temperature: 0 });
  t.is((await lastBody('openai-a')).temperature, 0);
  const none = await newAgent(gw, ent, { model_id: 'gpt-5-mini' });
  await sdk((await issueKey(gw, ent, none.id)).key).chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] });
  t.false('temperature' in (await lastBody('openai-a')));
});

test.serial('image_url parts: 400 model_no_vision on a model without vision, forwarded on one with it', async (t) => {
  const blind = await newAgent(gw, ent, { model_id: SPREAD_MODEL });
  const blindKey = (await issueKey(gw, ent, blind.id)).key;
  const image = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'what is this' }, { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }];
  const err = await t.throwsAsync(sdk(blindKey).chat.completions.create({ model: 'x', messages: image }));
  t.is((err as any).status, 400);
  t.is((err as any).code, 'model_no_vision');
  const seeing = await newAgent(gw, ent, { model_id: 'gpt-5-mini' });
  const ok = await sdk((await issueKey(gw, ent, seeing.id)).key).chat.completions.create({ model: 'x', messages: image });
  t.is(ok.object, 'chat.completion');
});

test.serial('a session_id header pins one channel for 20 turns; without it turns spread; other sessions land elsewhere', async (t) => {
  const agent = await newAgent(gw, ent, { model_id: SPREAD_MODEL });
  const { key } = await issueKey(gw, ent, agent.id);
  const client = sdk(key);
  const turn = (headers: Record<string, string> = {}) =>
    client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'turn' }], max_tokens: 5 }, { headers });

  await clearUpstream(gw);
  for (let i = 0; i < 20; i++) await turn({ session_id: 'conv-42' });
  const pinned = await channelCounts(gw, [...SPREAD_CHANNELS, 'agent-z']);
  t.is(Object.values(pinned).filter((n) => n > 0).length, 1, JSON.stringify(pinned));
  t.is(Object.values(pinned).reduce((a, b) => a + b, 0), 20);

  // conversation_id works the same, and streams follow the same channel.
  await clearUpstream(gw);
  for (let i = 0; i < 5; i++) {
    const s = await client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'turn' }], stream: true }, { headers: { conversation_id: 'conv-7' } });
    for await (const _ of s) void _;
  }
  t.is(Object.values(await channelCounts(gw, SPREAD_CHANNELS)).filter((n) => n > 0).length, 1);

  await clearUpstream(gw);
  for (let i = 0; i < 20; i++) await turn();
  const spread = await channelCounts(gw, SPREAD_CHANNELS);
  t.true(Object.values(spread).filter((n) => n > 0).length >= 2, JSON.stringify(spread));

  await clearUpstream(gw);
  for (let i = 0; i < 12; i++) await turn({ session_id: `other-${i}` });
  t.true(Object.values(await channelCounts(gw, SPREAD_CHANNELS)).filter((n) => n > 0).length >= 2);
});

test.serial('billing goes to the enterprise, never to the holder\'s personal balance', async (t) => {
  const agent = await newAgent(gw, ent, { model_id: 'gpt-5-mini' });
  const { key } = await issueKey(gw, ent, agent.id, { holder_user_id: ent.member });
  const member = (await gw.admin('GET', `/users/${ent.member}`)).body;
  const personalBefore = await gw.deps.wallet.balance(member.personal_account_id);
  const entBefore = await gw.deps.wallet.balance(ent.id);
  const { data, response } = await sdk(key).chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'bill me' }], max_tokens: 20 }).withResponse();
  const row = await usageRow(gw, response.headers.get('x-gateway-trace')!);
  t.true(row.cost_nano > 0);
  t.is(row.cost_nano, Math.round(data.usage!.prompt_tokens * 250 + data.usage!.completion_tokens * 2000));
  t.is(await gw.deps.wallet.balance(ent.id), entBefore - row.cost_nano);
  t.is(await gw.deps.wallet.balance(member.personal_account_id), personalBefore);
  const charge = await gw.deps.db.Ledger.findById(`${row.request_id}:charge`).lean();
  t.is(charge!.account_id, ent.id);
});

test.serial('auth by Bearer, x-api-key and ?key=; streaming through the SDK', async (t) => {
  const agent = await newAgent(gw, ent, { model_id: 'gpt-5-mini' });
  const { key } = await issueKey(gw, ent, agent.id);
  const body = { model: 'x', messages: [{ role: 'user' as const, content: 'hi' }] };
  t.is((await post(gw, '/v1/chat/completions', body, { key })).status, 200);
  t.is((await post(gw, '/v1/chat/completions', body, { headers: { 'x-api-key': key } })).status, 200);
  t.is((await post(gw, `/v1/chat/completions?key=${key}`, body)).status, 200);
  // model may be omitted: the agent's model is used
  t.is((await post(gw, '/v1/chat/completions', { messages: body.messages }, { key })).status, 200);
  const stream = await sdk(key).chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let usage: any;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  t.true(text.length > 0);
  t.true(usage.prompt_tokens > 0);
});

test.serial('every other endpoint refuses an agent key, in its own error shape', async (t) => {
  const agent = await newAgent(gw, ent, { model_id: 'gpt-5-mini' });
  const { key } = await issueKey(gw, ent, agent.id);
  const openaiShaped: Array<[string, string, unknown?]> = [
    ['POST', '/v1/responses', { model: 'gpt-5-mini', input: 'hi' }],
    ['POST', '/v1/images/generations', { model: 'gpt-image-1', prompt: 'fox' }],
    ['GET', '/v1/images/generations'],
    ['POST', '/v1/videos/generations', { model: 'seedance-1-pro', prompt: 'fox' }],
    ['POST', '/v1/music/generations', { model: 'suno-v4.5', prompt: 'song' }],
    ['POST', '/v1/audio/speech', { model: 'speech-2.5-hd', input: 'hi', voice: 'x' }],
    ['POST', '/v1/transcripts/extract', { url: 'https://example.com/v' }],
    ['POST', '/v1/embeddings', { model: 'text-embedding-3-small', input: 'hi' }],
    ['GET', '/v1/models'],
    ['GET', '/v1/key/balance'],
    ['GET', '/v1/dashboard/billing/subscription'],
    ['GET', '/v1/dashboard/billing/usage'],
    ['GET', '/api/v1/usage'],
  ];
  for (const [method, path, body] of openaiShaped) {
    const res = await fetch(gw.url + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
    const json: any = await res.json();
    t.is(res.status, 403, `${method} ${path}`);
    t.is(json.error?.code, 'permission_denied', `${method} ${path}: ${JSON.stringify(json)}`);
    t.is(json.error?.type, 'permission_error');
  }
  const messages = await post(gw, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' } });
  t.is(messages.status, 403);
  t.deepEqual(messages.json.type, 'error');
  t.is(messages.json.error.type, 'permission_error');
  const gemini = await post(gw, '/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ parts: [{ text: 'hi' }] }] }, { headers: { 'x-goog-api-key': key } });
  t.is(gemini.status, 403);
  t.is(gemini.json.error.status, 'PERMISSION_DENIED');
  t.is(gemini.json.error.code, 403);
  const wiki = await fetch(`${gw.url}/api/v1/ext/wiki/search?q=vacation`, { headers: { authorization: `Bearer ${key}` } });
  t.is(wiki.status, 403);
  t.is(((await wiki.json()) as any).error.code, 'permission_denied');
  const mcp = await fetch(`${gw.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.is(mcp.status, 403);
  const rpc: any = await mcp.json();
  t.is(rpc.jsonrpc, '2.0');
  t.regex(rpc.error.message, /agent key/);
  // ?key= as well
  const viaQuery = await fetch(`${gw.url}/v1/key/balance?key=${key}`);
  t.is(viaQuery.status, 403);
});

test.serial('4xx causes of agent calls, each in the chat-completions shape', async (t) => {
  const agent = await newAgent(gw, ent, { model_id: 'gpt-5-mini', knowledge_bases: ['handbook'] });
  const { key, id } = await issueKey(gw, ent, agent.id);
  const ask = (k = key, body: unknown = { model: 'x', messages: [{ role: 'user', content: 'vacation?' }], max_tokens: 10 }) => post(gw, '/v1/chat/completions', body, { key: k });
  t.is((await ask()).status, 200);

  // 400: bad body, conversation_id in the body.
  const bad = await ask(key, { model: 'x', messages: [{ role: 'wizard', content: 'hi' }] });
  t.is(bad.status, 400);
  t.is(bad.json.error.code, 'invalid_request');
  t.is((await ask(key, { model: 'x' })).status, 400);
  t.is((await ask(key, { model: 'x', messages: [{ role: 'user', content: 'hi' }], conversation_id: 'c1' })).json.error.param, 'conversation_id');

  // 401: invalid, expired.
  const invalid = await ask(`sk-${gw.config.KEY_SERVICE_TAG}-${'0'.repeat(64)}`);
  t.is(invalid.status, 401);
  t.is(invalid.json.error.code, 'invalid_api_key');
  const soon = await issueKey(gw, ent, agent.id, { expires_at: Math.floor(Date.now() / 1000) + 1 });
  await new Promise((r) => setTimeout(r, 1100));
  const expired = await ask(soon.key);
  t.is(expired.status, 401);
  t.is(expired.json.error.message, 'authentication failed: api key expired');

  // 403: whitelist, unreadable base, unpublished, deleted.
  await adminAs(gw, ent.owner, 'PUT', `/accounts/${ent.id}/agent-settings`, { model_whitelist: ['gpt-5.1'] });
  const off = await ask();
  t.is(off.status, 403);
  t.is(off.json.error.type, 'permission_error');
  t.regex(off.json.error.message, /whitelist/);
  await adminAs(gw, ent.owner, 'PUT', `/accounts/${ent.id}/agent-settings`, { model_whitelist: null });
  t.is((await ask()).status, 200);

  // A change of the base's readers reaches the very next call (no cache delay: the scope version moved).
  t.is((await ask()).status, 200);
  t.is((await gw.admin('PATCH', `/accounts/${ent.id}/kbs/handbook`, { readers: [ent.member2] })).status, 200);
  const unreadable = await ask();
  t.is(unreadable.status, 403);
  t.regex(unreadable.json.error.message, /handbook/);
  t.is((await gw.admin('PATCH', `/accounts/${ent.id}/kbs/handbook`, { readers: 'all' })).status, 200);
  t.is((await ask()).status, 200);

  await adminAs(gw, ent.admin, 'POST', `/agents/${agent.id}/unpublish`);
  const unpublished = await ask();
  t.is(unpublished.status, 403);
  t.regex(unpublished.json.error.message, /not published/);
  await adminAs(gw, ent.admin, 'POST', `/agents/${agent.id}/publish`);
  t.is((await ask()).status, 200);

  // 403: an agent of another enterprise (a record moved behind the key's back).
  const other = await newEnterprise(gw);
  const foreign = await newAgent(gw, other, { model_id: 'gpt-5-mini' });
  const rec = JSON.parse((await gw.deps.redis.get(`agent:${foreign.id}`))!);
  await gw.deps.redis.set(`agent:${agent.id}`, JSON.stringify({ ...rec, id: agent.id }));
  const cross = await ask();
  t.is(cross.status, 403);
  t.regex(cross.json.error.message, /another enterprise/);
  await adminAs(gw, ent.admin, 'PATCH', `/agents/${agent.id}`, { name: 'Helper' }); // republishes the true record
  t.is((await ask()).status, 200);

  // 402: the key's cap, then the enterprise balance.
  const capped = await issueKey(gw, ent, agent.id, { spend_cap_usd: '0.0001' });
  const statuses: number[] = [];
  let capHit;
  for (let i = 0; i < 10 && !capHit; i++) {
    const r = await ask(capped.key);
    statuses.push(r.status);
    if (r.status !== 200) capHit = r;
  }
  t.true(statuses[0] === 200 && capHit !== undefined, JSON.stringify(statuses));
  t.is(capHit!.status, 402);
  t.is(capHit!.json.error.code, 'quota_exceeded');
  t.is(await gw.deps.wallet.balance(ent.id) > 0, true, 'the enterprise still has money: the cap refused it');

  const poor = await newEnterprise(gw);
  const poorAgent = await newAgent(gw, poor, { model_id: 'gpt-5-mini' });
  const poorKey = (await issueKey(gw, poor, poorAgent.id)).key;
  const bal = await gw.deps.wallet.balance(poor.id);
  await gw.deps.wallet.apply({ opId: `test:${poor.id}:drain`, accountId: poor.id, kind: 'adjust', amountNano: -bal });
  const broke = await ask(poorKey);
  t.is(broke.status, 402);
  t.is(broke.json.error.type, 'insufficient_quota');

  // 401: the enterprise inactive; then revoked.
  await gw.admin('PATCH', `/accounts/${ent.id}`, { status: 'inactive' });
  const inactive = await ask();
  t.is(inactive.status, 401);
  t.is(inactive.json.error.message, 'authentication failed: account is not active');
  await gw.admin('PATCH', `/accounts/${ent.id}`, { status: 'active' });
  await adminAs(gw, ent.admin, 'POST', `/agent-keys/${id}/revoke`);
  const revoked = await ask();
  t.is(revoked.status, 401);
  t.is(revoked.json.error.message, 'authentication failed: api key revoked');

  // 403: deleted agent.
  const k2 = await issueKey(gw, ent, agent.id);
  await adminAs(gw, ent.admin, 'DELETE', `/agents/${agent.id}`);
  const gone = await ask(k2.key);
  t.is(gone.status, 403);
  t.regex(gone.json.error.message, /deleted/);
});

test.serial('a spent agent key on an agent that does not serve gets the agent\'s 403, not the 402: unpublished, deleted, spent enterprise (security audit)', async (t) => {
  const e = await newEnterprise(gw);
  const agent = await newAgent(gw, e, { model_id: 'gpt-5-mini' });
  const capped = await issueKey(gw, e, agent.id, { spend_cap_usd: '0.0001' });
  const ask = (k: string) => post(gw, '/v1/chat/completions', { model: 'x', messages: [{ role: 'user', content: 'hello' }], max_tokens: 10 }, { key: k });
  let spent;
  for (let i = 0; i < 10 && !spent; i++) {
    const r = await ask(capped.key);
    if (r.status !== 200) spent = r;
  }
  t.is(spent?.status, 402, 'the cap is spent');
  await adminAs(gw, e.admin, 'POST', `/agents/${agent.id}/unpublish`);
  const unpublished = await ask(capped.key);
  t.is(unpublished.status, 403, JSON.stringify(unpublished.json));
  t.is(unpublished.json.error.code, 'permission_denied');
  t.regex(unpublished.json.error.message, /not published/);
  await adminAs(gw, e.admin, 'POST', `/agents/${agent.id}/publish`);
  t.is((await ask(capped.key)).status, 402, 'published again: the cap\'s 402');

  // The enterprise's balance spent: the same order.
  const fresh = await issueKey(gw, e, agent.id);
  const bal = await gw.deps.wallet.balance(e.id);
  await gw.deps.wallet.apply({ opId: `test:${e.id}:drain`, accountId: e.id, kind: 'adjust', amountNano: -bal });
  t.is((await ask(fresh.key)).status, 402);
  t.is((await adminAs(gw, e.owner, 'DELETE', `/agents/${agent.id}`)).status, 200);
  const deleted = await ask(fresh.key);
  t.is(deleted.status, 403, JSON.stringify(deleted.json));
  t.regex(deleted.json.error.message, /deleted/);
  t.is((await ask(capped.key)).status, 403);
});

test.serial('the pre-charge gate counts the persona and the injected pages', async (t) => {
  const e = await newEnterprise(gw);
  await seedTeamBase(gw, e.id, 'manual', [{ id: 'pg-huge', title: 'Turbine manual', body: `turbine maintenance ${'x'.repeat(7000)}` }]);
  const agent = await newAgent(gw, e, { model_id: SPREAD_MODEL, knowledge_bases: ['manual'] });
  const { key } = await issueKey(gw, e, agent.id);
  // 0.0003 credits: 1000 input tokens at 1 credit per 1M under the family's x0.3 promotion; the page alone is ~1800 tokens.
  const bal = await gw.deps.wallet.balance(e.id);
  await gw.deps.wallet.apply({ opId: `test:${e.id}:trim`, accountId: e.id, kind: 'adjust', amountNano: -(bal - 300_000) });
  const small = await post(gw, '/v1/chat/completions', { model: 'x', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 1 }, { key });
  t.is(small.status, 200);
  const withPage = await post(gw, '/v1/chat/completions', { model: 'x', messages: [{ role: 'user', content: 'turbine maintenance' }], max_tokens: 1 }, { key });
  const row = await usageRow(gw, withPage.trace);
  t.is(withPage.status, 402, JSON.stringify({ body: withPage.json, row, upstream: await lastBody(SPREAD_CHANNELS[0]).catch(() => null) }));
  t.is(row.status, 'rejected');
  t.is(row.agent_id, agent.id);
  t.deepEqual(row.kb_page_ids, ['pg-huge']);
});

test.serial('a revoked key is refused on the next request by another gateway instance that served it', async (t) => {
  const agent = await newAgent(gw, ent, { model_id: 'gpt-5-mini' });
  const issued = await issueKey(gw, ent, agent.id);
  const deps2 = await buildDeps(gw.config, createLogger('silent'));
  const server2 = createApp(deps2).listen(0, '127.0.0.1');
  await new Promise((r) => server2.once('listening', r));
  const url2 = `http://127.0.0.1:${(server2.address() as AddressInfo).port}`;
  try {
    const other = new OpenAI({ apiKey: issued.key, baseURL: `${url2}/v1`, maxRetries: 0 });
    const ok = await other.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] });
    t.is(ok.object, 'chat.completion');
    const r = await adminAs(gw, ent.admin, 'POST', `/agent-keys/${issued.id}/revoke`);
    t.is(r.status, 200);
    const err = await t.throwsAsync(other.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }));
    t.is((err as any).status, 401);
    t.is((err as any).error.message, 'authentication failed: api key revoked');
  } finally {
    server2.closeAllConnections();
    await new Promise((r) => server2.close(r));
    await deps2.close();
  }
});

test.serial("an agent reads its enterprise's bases only: 'default' is the enterprise's own, never its creator's personal base, and another enterprise's base is not attachable", async (t) => {
  const e = await newEnterprise(gw);
  const other = await newEnterprise(gw);
  const owner = await gw.deps.db.User.findById(e.owner).lean();
  const personal = owner!.personal_account_id;
  await seedTeamBase(gw, personal, 'default', [{ id: 'pg-diary', title: 'Owner diary', body: 'The diary pin code is PERSONAL-SECRET-4321.' }], 'all', 'personal');
  await seedTeamBase(gw, e.id, 'default', [{ id: 'pg-pin-policy', title: 'Pin code policy', body: 'The enterprise pin code policy: ENTERPRISE-HANDBOOK rotate every quarter.' }], 'all', 'personal');
  // The owner also belongs to another enterprise, whose team base is open to all its members.
  t.is((await gw.admin('PUT', `/accounts/${other.id}/members`, { user_id: e.owner, role: 'member' })).status, 200);
  await seedTeamBase(gw, other.id, 'other-secrets', [{ id: 'pg-other', title: 'Other', body: 'OTHER-ENTERPRISE pin code.' }]);

  const agent = await newAgent(gw, e, { model_id: 'gpt-5-mini', knowledge_bases: ['default'] });
  t.deepEqual(agent.knowledge_bases, ['default']);
  t.is((await adminAs(gw, e.owner, 'PUT', `/agents/${agent.id}/knowledge-bases/other-secrets`)).status, 404);
  const { Agent } = agentModels(gw.deps.db.conn);
  const stored = await Agent.findById(agent.id).lean();
  t.deepEqual(stored!.knowledge_bases, [{ account_id: e.id, kb_id: 'default' }]);

  const { key } = await issueKey(gw, e, agent.id);
  await clearUpstream(gw);
  await sdk(key).chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'what is the pin code?' }] });
  const sent = JSON.stringify((await lastBody('openai-a')).messages);
  t.regex(sent, /ENTERPRISE-HANDBOOK/);
  t.notRegex(sent, /PERSONAL-SECRET|OTHER-ENTERPRISE/);

  // An agent stored with its creator's personal base (as attached before this rule): its calls are refused, the base never read.
  await Agent.updateOne({ _id: agent.id }, { $set: { knowledge_bases: [{ account_id: personal, kb_id: 'default' }] } });
  await gw.deps.redis.del(agentRedisKeys.agent(agent.id)); // read from the store again
  await clearUpstream(gw);
  const refused = await post(gw, '/v1/chat/completions', { model: 'x', messages: [{ role: 'user', content: 'what is the pin code?' }] }, { key });
  t.is(refused.status, 403, JSON.stringify(refused.json));
  t.is((await upstreamRequests(gw, 'openai-a')).length, 0);
});

test.serial("an agent whose creator left the enterprise no longer reads the enterprise's bases", async (t) => {
  const e = await newEnterprise(gw);
  await seedTeamBase(gw, e.id, 'default', [{ id: 'pg-e', title: 'Enterprise page', body: 'ENTERPRISE-ONLY quarterly numbers.' }], 'all', 'personal');
  const agent = await newAgent(gw, e, { model_id: 'gpt-5-mini', knowledge_bases: ['default'] });
  const { key } = await issueKey(gw, e, agent.id);
  const ok = await post(gw, '/v1/chat/completions', { model: 'x', messages: [{ role: 'user', content: 'quarterly numbers' }] }, { key });
  t.is(ok.status, 200);
  t.is((await gw.admin('DELETE', `/accounts/${e.id}/members/${e.owner}`)).status, 204);
  const gone = await post(gw, '/v1/chat/completions', { model: 'x', messages: [{ role: 'user', content: 'quarterly numbers' }] }, { key });
  t.is(gone.status, 403);
});
