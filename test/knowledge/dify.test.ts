import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { seedDocument } from './seed';

/** Dify's External Knowledge API at POST /api/v1/integrations/dify/retrieval. */

let gw: TestGateway;
let acct: { id: string };
let key: string;
let otherKey: string;
const PATH = '/api/v1/integrations/dify/retrieval';

async function retrieve(body: unknown, headers: Record<string, string> = { authorization: `Bearer ${key}` }) {
  const res = await fetch(`${gw.url}${PATH}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

test.before(async () => {
  gw = await startGateway();
  acct = await gw.newAccount({ name: 'dify' });
  key = (await gw.newKey(acct.id)).key;
  await seedDocument(gw.deps, acct.id, 'default', [
    { id: 'pg_tea', title: 'Green tea', summary: 'How to brew green tea.', body: 'Brew green tea at 80 degrees for two minutes.', tags: ['tea'] },
    { id: 'pg_black', title: 'Black tea', body: 'Black tea takes boiling water.', tags: ['tea'] },
    { id: 'pg_coffee', title: 'Coffee', body: 'Coffee is not tea. Water at 93 degrees.', tags: ['coffee'] },
    { id: 'pg_zh', title: '绿茶', body: '绿茶用八十度的水冲泡两分钟。', tags: ['茶'] },
  ]);
  const other = await gw.newAccount({ name: 'other' });
  otherKey = (await gw.newKey(other.id)).key;
});
test.after.always(async () => {
  await gw?.close();
});

test('records with 0..1 scores, best first, content title and metadata', async (t) => {
  const r = await retrieve({ knowledge_id: 'default', query: 'green tea', retrieval_setting: { top_k: 5, score_threshold: 0 } });
  t.is(r.status, 200);
  const recs = r.body.records;
  t.is(recs[0].title, 'Green tea');
  t.is(recs[0].score, 1);
  t.regex(recs[0].content, /80 degrees/);
  t.is(recs[0].metadata.page_id, 'pg_tea');
  t.is(recs[0].metadata.kb_id, 'default');
  for (const rec of recs) {
    t.true(rec.score >= 0 && rec.score <= 1);
    t.is(typeof rec.metadata, 'object');
    t.not(rec.metadata, null);
  }
  for (let i = 1; i < recs.length; i++) t.true(recs[i - 1].score >= recs[i].score);
  t.deepEqual(recs.map((x: any) => x.metadata.page_id).sort(), ['pg_black', 'pg_coffee', 'pg_tea']);

  const top1 = await retrieve({ knowledge_id: 'default', query: 'green tea', retrieval_setting: { top_k: 1, score_threshold: 0 } });
  t.is(top1.body.records.length, 1);
  const strict = await retrieve({ knowledge_id: 'default', query: 'green tea', retrieval_setting: { top_k: 5, score_threshold: 0.9 } });
  t.deepEqual(strict.body.records.map((x: any) => x.title), ['Green tea']);
  const none = await retrieve({ knowledge_id: 'default', query: 'volcano', retrieval_setting: { top_k: 5, score_threshold: 0 } });
  t.deepEqual(none.body, { records: [] });
  const zh = await retrieve({ knowledge_id: 'default', query: '绿茶怎么冲泡', retrieval_setting: { top_k: 3, score_threshold: 0.5 } });
  t.is(zh.body.records[0].title, '绿茶');
  const all = await retrieve({ knowledge_id: '*', query: 'coffee', retrieval_setting: { top_k: 3, score_threshold: 0 } });
  t.is(all.status, 200, JSON.stringify(all.body));
  t.is(all.body.records[0].metadata.page_id, 'pg_coffee');
});

test('Dify error codes: 1001 header, 1002 key, 2001 knowledge, 1000 body; other accounts see nothing', async (t) => {
  const body = { knowledge_id: 'default', query: 'tea', retrieval_setting: { top_k: 3, score_threshold: 0 } };
  const noHeader = await retrieve(body, {});
  t.is(noHeader.status, 401);
  t.is(noHeader.body.error_code, 1001);
  t.is(typeof noHeader.body.error_msg, 'string');
  t.is((await retrieve(body, { authorization: 'Basic abc' })).body.error_code, 1001);
  const badKey = await retrieve(body, { authorization: `Bearer sk-test-${'0'.repeat(64)}` });
  t.is(badKey.status, 401);
  t.is(badKey.body.error_code, 1002);
  const missing = await retrieve({ ...body, knowledge_id: 'kb_nope' });
  t.is(missing.status, 404);
  t.is(missing.body.error_code, 2001);
  for (const bad of [{}, { ...body, query: '' }, { ...body, retrieval_setting: { top_k: 0, score_threshold: 0 } }, { ...body, retrieval_setting: { top_k: 3, score_threshold: 2 } }]) {
    const r = await retrieve(bad);
    t.is(r.status, 400, JSON.stringify(bad));
    t.is(r.body.error_code, 1000);
  }
  const other = await retrieve(body, { authorization: `Bearer ${otherKey}` });
  t.deepEqual(other.body, { records: [] }, 'the other account\'s own default base is empty; ours is not visible');
});

test('free: works at balance 0 and moves nothing', async (t) => {
  const before = await gw.deps.wallet.balance(acct.id);
  await gw.deps.wallet.apply({ opId: `${acct.id}:drain`, accountId: acct.id, kind: 'adjust', amountNano: -before });
  const r = await retrieve({ knowledge_id: 'default', query: 'tea', retrieval_setting: { top_k: 3, score_threshold: 0 } });
  t.is(r.status, 200);
  t.true(r.body.records.length > 0);
  t.is(await gw.deps.wallet.balance(acct.id), 0);
  await gw.deps.wallet.apply({ opId: `${acct.id}:refill`, accountId: acct.id, kind: 'adjust', amountNano: before });
});
