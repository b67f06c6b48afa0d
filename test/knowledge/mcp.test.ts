import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execFile } from 'node:child_process';
import { ensureMcpPython } from '../../dev/scripts/lib/python-clients';
import { promisify } from 'node:util';
import { startGateway, type TestGateway } from '../helpers/stack';
import { WIKI_TOOLS } from '../../capabilities/knowledge/mcp/tools';
import { seedDocument, seedTeamBase } from './seed';

/** Spec 3 section 4.2: the MCP server at /mcp, through the official SDK client and as raw JSON-RPC. */

let gw: TestGateway;
let user: { id: string; personal_account_id: string };
let key: string;
let otherKey: string;

const BIG = `${'Volcanoes erupt lava and ash. '.repeat(400)}`;

test.before(async () => {
  gw = await startGateway();
  user = (await gw.admin('POST', '/users', { email: 'mcp@example.com', name: 'M' })).body;
  key = (await gw.newKey(user.personal_account_id)).key;
  const ent = await gw.newAccount({ name: 'Acme', enterprise: true });
  await gw.admin('PUT', `/accounts/${ent.id}/members`, { user_id: user.id, role: 'member' });
  await seedTeamBase(gw.deps, ent.id, 'kb_geo');
  await seedTeamBase(gw.deps, ent.id, 'kb_private', ['usr_someone_else']);
  await seedDocument(gw.deps, user.personal_account_id, 'default', [
    { id: 'pg_volcano', title: 'Volcano', body: BIG, summary: 'Mountains that erupt.', tags: ['geology'], aliases: ['volcanoes'] },
    { id: 'pg_lava', title: 'Lava', body: 'Lava is molten rock from a [[Volcano]].', tags: ['geology'], links: ['pg_volcano'] },
    { id: 'pg_zh', title: '火山', body: '火山喷发时会流出熔岩。', tags: ['地质'] },
  ], { filename: 'volcanoes.md' });
  await seedDocument(gw.deps, ent.id, 'kb_geo', [
    { id: 'pg_quake', title: 'Earthquakes', body: 'Earthquakes often come with volcano activity.', tags: ['geology'], links: ['pg_volcano'] },
  ]);
  await seedDocument(gw.deps, ent.id, 'kb_private', [{ id: 'pg_private', title: 'Private volcano notes', body: 'Volcano secrets.', tags: ['geology'] }]);
  const stranger = await gw.newAccount({ name: 'stranger' });
  otherKey = (await gw.newKey(stranger.id)).key;
  await seedDocument(gw.deps, stranger.id, 'default', [{ id: 'pg_foreign', title: 'Foreign volcano', body: 'Another account\'s volcano.', tags: ['geology'] }]);
});
test.after.always(async () => {
  await gw?.close();
});

async function sdkClient(headers: Record<string, string>) {
  const client = new Client({ name: 'ava', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  return client;
}

test('the official SDK client lists the 6 tools and calls each of them', async (t) => {
  const client = await sdkClient({ authorization: `Bearer ${key}` });
  try {
    const info = client.getServerVersion();
    t.is(info?.name, 'model-gateway-wiki');
    const { tools } = await client.listTools();
    t.deepEqual(tools.map((x) => x.name).sort(), ['backlinks', 'get_source', 'list_by_tag', 'read_page', 'read_pages', 'search_wiki']);
    const search = tools.find((x) => x.name === 'search_wiki')!;
    t.deepEqual(search.inputSchema.required, ['q']);
    t.is((search.inputSchema.properties as any).limit.maximum, 50);
    t.truthy(search.outputSchema);
    for (const tool of tools) t.false('kb_id' in (tool.inputSchema.properties ?? {}), `${tool.name} takes no kb_id`);

    const s = await client.callTool({ name: 'search_wiki', arguments: { q: 'volcano' } }) as any;
    t.falsy(s.isError);
    const ids = s.structuredContent.results.map((h: any) => h.id);
    t.is(ids[0], 'pg_volcano');
    t.deepEqual(new Set(ids), new Set(['pg_volcano', 'pg_lava', 'pg_quake']), 'personal and readable team bases; no private, no foreign');
    t.is(s.structuredContent.total_hits, 3);
    t.is(s.structuredContent.results.find((h: any) => h.id === 'pg_quake').kb_id, 'kb_geo');
    t.false('body' in s.structuredContent.results[0]);
    t.regex(s.content[0].text, /Volcano/);
    const one = await client.callTool({ name: 'search_wiki', arguments: { q: 'volcano', limit: 1, offset: 1 } }) as any;
    t.is(one.structuredContent.returned, 1);
    t.is(one.structuredContent.offset, 1);
    t.true(one.structuredContent.has_more);
    const zh = await client.callTool({ name: 'search_wiki', arguments: { q: '火山熔岩' } }) as any;
    t.is(zh.structuredContent.results[0].id, 'pg_zh');

    const page = await client.callTool({ name: 'read_page', arguments: { id: 'pg_volcano' } }) as any;
    t.is(page.structuredContent.body.length, 8000);
    t.true(page.structuredContent.body_truncated);
    t.regex(page.content[0].text, /^# Volcano/);
    const team = await client.callTool({ name: 'read_page', arguments: { id: 'pg_quake' } }) as any;
    t.is(team.structuredContent.kb_id, 'kb_geo');

    const batch = await client.callTool({ name: 'read_pages', arguments: { ids: ['pg_volcano', 'pg_lava', 'pg_nothing', 'pg_foreign'] } }) as any;
    t.deepEqual(batch.structuredContent.pages.map((p: any) => p.id), ['pg_volcano', 'pg_lava']);
    t.is(batch.structuredContent.pages[0].body.length, 1200);
    t.true(batch.structuredContent.pages[0].body_truncated);
    t.false(batch.structuredContent.pages[1].body_truncated);
    t.deepEqual(batch.structuredContent.missing, ['pg_nothing', 'pg_foreign']);
    const many = await client.callTool({ name: 'read_pages', arguments: { ids: Array.from({ length: 30 }, (_, i) => (i === 29 ? 'pg_lava' : `pg_x${i}`)) } }) as any;
    t.is(many.structuredContent.missing.length, 25, 'only the first 25 ids are read');

    const tag = await client.callTool({ name: 'list_by_tag', arguments: { tag: 'geology' } }) as any;
    t.deepEqual(tag.structuredContent.pages.map((p: any) => p.id), ['pg_quake', 'pg_lava', 'pg_volcano']);

    const back = await client.callTool({ name: 'backlinks', arguments: { id: 'pg_volcano' } }) as any;
    t.deepEqual(back.structuredContent.pages.map((p: any) => p.id), ['pg_quake', 'pg_lava']);

    const src = await client.callTool({ name: 'get_source', arguments: { id: 'pg_lava' } }) as any;
    t.is(src.structuredContent.url_ttl_secs, 3600);
    t.is(src.structuredContent.filename, 'volcanoes.md');
    const file = await fetch(src.structuredContent.url);
    t.is(file.status, 200);
    t.regex(await file.text(), /molten rock/);
  } finally {
    await client.close();
  }
});

test('unknown or unreadable pages and bad arguments are tool errors, never a 5xx', async (t) => {
  const client = await sdkClient({ 'x-api-key': key });
  try {
    for (const [name, args] of [
      ['read_page', { id: 'pg_nothing' }], ['read_page', { id: 'pg_foreign' }], ['read_page', { id: 'pg_private' }],
      ['backlinks', { id: 'pg_foreign' }], ['get_source', { id: 'pg_private' }],
    ] as const) {
      const r = await client.callTool({ name, arguments: args }) as any;
      t.true(r.isError, `${name} ${args.id}`);
      t.regex(r.content[0].text, /not found/);
    }
    const a = await client.callTool({ name: 'read_page', arguments: { id: 'pg_nothing' } }) as any;
    const b = await client.callTool({ name: 'read_page', arguments: { id: 'pg_foreign' } }) as any;
    t.is(a.content[0].text.replace('pg_nothing', 'X'), b.content[0].text.replace('pg_foreign', 'X'));

    for (const [name, args] of [
      ['search_wiki', { q: 'x', limit: 51 }], ['search_wiki', {}], ['search_wiki', { q: '' }], ['read_pages', { ids: [] }],
      ['read_page', { id: 5 }], ['list_by_tag', {}],
    ] as const) {
      const r = await client.callTool({ name, arguments: args as any }) as any;
      t.true(r.isError, `${name} ${JSON.stringify(args)}`);
      t.regex(r.content[0].text, /Input validation error/);
    }
  } finally {
    await client.close();
  }
  // The stranger sees only their own page.
  const stranger = await sdkClient({ authorization: `Bearer ${otherKey}` });
  const s = await stranger.callTool({ name: 'search_wiki', arguments: { q: 'volcano' } }) as any;
  t.deepEqual(s.structuredContent.results.map((h: any) => h.id), ['pg_foreign']);
  await stranger.close();
});

test('an invalid key is refused by the SDK client', async (t) => {
  await t.throwsAsync(() => sdkClient({ authorization: `Bearer sk-test-${'0'.repeat(64)}` }), { message: /401|authentication/i });
});

async function rpc(body: unknown, headers: Record<string, string> = { authorization: `Bearer ${key}` }, method = 'POST') {
  const res = await fetch(`${gw.url}/mcp`, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: method === 'POST' ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

test('raw JSON-RPC: initialize, tools/list, tools/call, errors', async (t) => {
  const init = await rpc({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '0' } },
  });
  t.is(init.status, 200);
  t.regex(init.headers.get('content-type') ?? '', /application\/json/);
  t.is(init.headers.get('mcp-session-id'), null, 'stateless: no session');
  t.is(init.body.jsonrpc, '2.0');
  t.is(init.body.id, 1);
  t.is(init.body.result.protocolVersion, '2025-06-18');
  t.truthy(init.body.result.capabilities.tools);
  t.is(init.body.result.serverInfo.name, 'model-gateway-wiki');

  t.is((await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);

  const list = await rpc({ jsonrpc: '2.0', id: 'a', method: 'tools/list' });
  t.is(list.body.id, 'a');
  t.is(list.body.result.tools.length, 6);

  const call = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search_wiki', arguments: { q: 'lava', limit: 5 } } });
  t.is(call.status, 200);
  t.is(call.body.result.structuredContent.results[0].id, 'pg_lava');
  t.is(call.body.result.content[0].type, 'text');

  const unknownMethod = await rpc({ jsonrpc: '2.0', id: 3, method: 'no/such' });
  t.is(unknownMethod.body.error.code, -32601);
  t.is(unknownMethod.body.id, 3);

  const parse = await rpc('{"jsonrpc": "2.0", "id": 5, "method": ');
  t.is(parse.status, 400);
  t.is(parse.body.error.code, -32700);

  // No MCP-Protocol-Version header: the server assumes 2025-03-26, which had batches.
  const batch = await rpc([{ jsonrpc: '2.0', id: 7, method: 'tools/list' }, { jsonrpc: '2.0', id: 8, method: 'ping' }]);
  t.is(batch.status, 200);
  t.deepEqual(batch.body.map((m: any) => m.id).sort(), [7, 8]);
});

test('raw JSON-RPC: protocol errors as MCP 2025-06-18 and JSON-RPC 2.0 define them', async (t) => {
  const v = { authorization: `Bearer ${key}`, 'mcp-protocol-version': '2025-06-18' };
  const init = await rpc({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '0' } } });
  t.deepEqual(init.body.result.capabilities.tools, { listChanged: false }, 'a stateless JSON server never sends list_changed');
  t.deepEqual((await rpc({ jsonrpc: '2.0', id: 'l', method: 'tools/list' }, v)).body.result.tools.map((x: any) => x.name).sort(), [...WIKI_TOOLS].sort());

  // Unknown tool: a protocol error with the request's id (server/tools, Error Handling), not an isError result.
  const unknownTool = await rpc({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'delete_everything', arguments: {} } }, v);
  t.is(unknownTool.status, 200);
  t.deepEqual(unknownTool.body, { jsonrpc: '2.0', id: 4, error: { code: -32602, message: 'Unknown tool: delete_everything' } });
  // A known tool's bad argument stays a tool result the model can read.
  t.true((await rpc({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'search_wiki', arguments: {} } }, v)).body.result.isError);

  // Valid JSON that is no JSON-RPC message: Invalid Request, id null.
  for (const body of [{ hello: 'world' }, { jsonrpc: '2.0', id: null, method: 'ping' }, { jsonrpc: '1.0', id: 1, method: 'ping' }, 42, [1]]) {
    const r = await rpc(body);
    t.is(r.status, 400, JSON.stringify(body));
    t.deepEqual([r.body.error.code, r.body.id], [-32600, null], JSON.stringify(body));
  }
  // An empty batch: one Invalid Request (JSON-RPC 2.0 section 6).
  const empty = await rpc([]);
  t.is(empty.status, 400);
  t.false(Array.isArray(empty.body));
  t.is(empty.body.error.code, -32600);
  // 2025-06-18 removed batching: one message per POST.
  for (const version of ['2025-06-18', '2025-11-25']) {
    const batch = await rpc([{ jsonrpc: '2.0', id: 7, method: 'tools/list' }, { jsonrpc: '2.0', id: 8, method: 'ping' }], { ...v, 'mcp-protocol-version': version });
    t.is(batch.status, 400, version);
    t.is(batch.body.error.code, -32600, version);
  }
  const legacy = await rpc([{ jsonrpc: '2.0', id: 7, method: 'ping' }, { jsonrpc: '2.0', id: 8, method: 'ping' }], { ...v, 'mcp-protocol-version': '2025-03-26' });
  t.deepEqual([legacy.status, legacy.body.map((m: any) => m.id).sort()], [200, [7, 8]]);
  // The transport's own answers are unchanged: ping, a notification's 202, a wrong content type's 415.
  t.deepEqual((await rpc({ jsonrpc: '2.0', id: 9, method: 'ping' }, v)).body, { jsonrpc: '2.0', id: 9, result: {} });
  t.is((await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, v)).status, 202);
  const plain = await fetch(`${gw.url}/mcp`, { method: 'POST', headers: { ...v, 'content-type': 'text/plain', accept: 'application/json, text/event-stream' }, body: '{}' });
  t.is(plain.status, 415);
});

test('the official Python SDK client initializes, lists and calls tools, and gets -32602 for an unknown tool', async (t) => {
  t.timeout(600_000); // the first run on a machine installs the SDK from PyPI (dev/scripts/lib/python-clients.ts)
  const python = await ensureMcpPython((line) => t.log(line));
  const script = `
import asyncio, json, sys
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
async def main():
    http = create_mcp_http_client(headers={"Authorization": "Bearer " + sys.argv[2]})
    async with http, streamable_http_client(sys.argv[1], http_client=http, terminate_on_close=False) as streams:
        async with ClientSession(streams[0], streams[1]) as s:
            init = await s.initialize()
            tools = await s.list_tools()
            hit = await s.call_tool("search_wiki", {"q": "lava", "limit": 3})
            try:
                await s.call_tool("no_such_tool", {})
                unknown = None
            except MCPError as e:
                unknown = e.code
            print(json.dumps({"version": init.protocol_version, "listChanged": init.capabilities.tools.list_changed,
                              "tools": sorted(x.name for x in tools.tools), "first": hit.structured_content["results"][0]["id"], "unknown": unknown}))
asyncio.run(main())
`;
  const { stdout } = await promisify(execFile)(python, ['-c', script, `${gw.url}/mcp`, key], { timeout: 60_000 });
  const out = JSON.parse(stdout.trim().split('\n').pop()!);
  t.deepEqual(out, { version: out.version, listChanged: false, tools: [...WIKI_TOOLS].sort(), first: 'pg_lava', unknown: -32602 });
  t.regex(out.version, /^20\d\d-\d\d-\d\d$/);
});

test('raw JSON-RPC: key refusals are 401 JSON-RPC errors; GET is 405 with Allow', async (t) => {
  const msg = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
  const refused: Record<string, string>[] = [{}, { authorization: 'Bearer nonsense' }, { 'x-api-key': `sk-test-${'1'.repeat(64)}` }];
  for (const headers of refused) {
    const r = await rpc(msg, headers);
    t.is(r.status, 401);
    t.is(r.body.jsonrpc, '2.0');
    t.is(typeof r.body.error.code, 'number');
    t.regex(r.body.error.message, /authentication failed/);
    t.is(r.body.error.data.code, 'invalid_api_key');
    t.regex(r.headers.get('www-authenticate') ?? '', /Bearer/);
  }
  // ?key= is not a way in for /mcp (headers only).
  const viaQuery = await fetch(`${gw.url}/mcp?key=${key}`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(msg),
  });
  t.is(viaQuery.status, 401);

  for (const method of ['GET', 'DELETE', 'PUT']) {
    const r = await rpc(undefined, { authorization: `Bearer ${key}` }, method);
    t.is(r.status, 405, method);
    t.is(r.headers.get('allow'), 'POST');
  }
});

test('MCP reads are free: they work at balance 0 and move nothing', async (t) => {
  const acct = user.personal_account_id;
  const before = await gw.deps.wallet.balance(acct);
  await gw.deps.wallet.apply({ opId: `${acct}:drain`, accountId: acct, kind: 'adjust', amountNano: -before });
  const ledger = await gw.deps.db.Ledger.countDocuments({ account_id: acct });
  const client = await sdkClient({ authorization: `Bearer ${key}` });
  for (const [name, args] of [
    ['search_wiki', { q: 'volcano' }], ['read_page', { id: 'pg_lava' }], ['read_pages', { ids: ['pg_lava'] }],
    ['list_by_tag', { tag: 'geology' }], ['backlinks', { id: 'pg_volcano' }], ['get_source', { id: 'pg_lava' }],
  ] as const) {
    const r = await client.callTool({ name, arguments: args as any }) as any;
    t.falsy(r.isError, name);
  }
  await client.close();
  t.is(await gw.deps.wallet.balance(acct), 0);
  t.is(await gw.deps.db.Ledger.countDocuments({ account_id: acct }), ledger);
  await gw.deps.wallet.apply({ opId: `${acct}:refill`, accountId: acct, kind: 'adjust', amountNano: before });
});
