import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, type TestGateway } from '../helpers/stack';
import { load, uploadJson, waitBuild } from './kit';

/** End to end: documents uploaded through the management API, built by the workflow, read over REST, MCP and Dify. */

let gw: TestGateway;
let acct: { id: string };
let key: string;

const HANDBOOK = `# Travel handbook

## Booking flights

Book economy class for flights under six hours. See [[Expense claims]] for receipts.

## Hotels

Hotels near the office are preferred.
`;
const EXPENSES = `# Expense claims

Submit receipts within 30 days. Flights booked outside the portal are not refunded.
`;
const ZH = `# 报销制度

## 差旅报销

员工出差的机票和酒店费用可以在三十天内报销。
`;

test.before(async () => {
  gw = await startGateway({}, { worker: true, simulator: true });
  acct = await gw.newAccount({ name: 'e2e' });
  key = (await gw.newKey(acct.id)).key;
  for (const [name, text] of [['handbook.md', HANDBOOK], ['expenses.md', EXPENSES], ['zh.md', ZH]]) {
    const build = await load(gw, acct.id, 'default', name, text);
    if (build.state !== 'succeeded') throw new Error(`build failed: ${JSON.stringify(build)}`);
  }
});
test.after.always(async () => {
  await gw?.close();
});

const get = async (path: string) => {
  const res = await fetch(`${gw.url}/api/v1/ext/wiki${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as any };
};

test('uploaded documents are searchable, readable, linked and downloadable over REST', async (t) => {
  const s = await get('/search?q=economy%20flights');
  t.is(s.status, 200);
  const hit = s.body.results[0];
  t.regex(hit.title, /Booking flights/);
  t.regex(hit.snippet, /economy/i);
  const page = await get(`/pages/${hit.id}`);
  t.is(page.status, 200);
  t.regex(page.body.body, /six hours/);
  t.is(page.body.source.filename, 'handbook.md');
  const target = page.body.outgoing_links.find((l: any) => /Expense claims/.test(l.title));
  t.truthy(target, JSON.stringify(page.body.outgoing_links));
  t.true(target.resolved);
  const back = await get(`/pages/${target.id}/backlinks`);
  t.true(back.body.data.some((p: any) => p.id === hit.id));
  const src = await get(`/pages/${hit.id}/source`);
  const file = await fetch(src.body.url);
  t.is(file.status, 200);
  t.is(await file.text(), HANDBOOK);
  const zh = await get(`/search?q=${encodeURIComponent('机票报销')}`);
  t.regex(zh.body.results[0].title, /报销/);
  const kbs = await get('/kbs');
  t.is(kbs.body.data[0].page_count, (await gw.deps.pages.livePages({ account_id: acct.id, kb_id: 'default' })).length);
  t.true(kbs.body.data[0].page_count >= 3);
});

test('a rebuild is seen at once and a deleted document disappears from every surface', async (t) => {
  const r = await uploadJson(gw, acct.id, 'default', { filename: 'expenses.md', content: EXPENSES.replace('30 days', '60 days').replace('receipts', 'invoices') });
  t.is((await waitBuild(gw, acct.id, 'default', r.body.id)).state, 'succeeded');
  const s = await get('/search?q=invoices');
  t.is(s.body.total_hits, 1);
  t.regex(s.body.results[0].snippet, /60 days/);

  const client = new Client({ name: 'e2e', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-api-key': key } } }));
  const found = await client.callTool({ name: 'search_wiki', arguments: { q: 'invoices' } }) as any;
  t.is(found.structuredContent.total_hits, 1);
  const id = found.structuredContent.results[0].id;

  const docs = await gw.admin('GET', `/accounts/${acct.id}/kbs/default/documents`);
  const doc = docs.body.data.find((d: any) => d.filename === 'expenses.md');
  t.is((await gw.admin('DELETE', `/accounts/${acct.id}/kbs/default/documents/${doc.id}`)).status, 200);
  t.is((await get('/search?q=invoices')).body.total_hits, 0);
  t.is((await get(`/pages/${id}`)).status, 404);
  const gone = await client.callTool({ name: 'read_page', arguments: { id } }) as any;
  t.true(gone.isError);
  await client.close();
  const dify = await fetch(`${gw.url}/api/v1/integrations/dify/retrieval`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ knowledge_id: 'default', query: 'invoices', retrieval_setting: { top_k: 3, score_threshold: 0 } }),
  });
  t.deepEqual(await dify.json(), { records: [] });
});
