import test from 'ava';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { PageDoc } from '../../capabilities/knowledge/store';
import { CorpusCache } from '../../capabilities/knowledge/corpus';
import { Retrieval } from '../../capabilities/knowledge/retrieval';
import { baseKey, type BaseRef, type PageStore } from '../../capabilities/knowledge/page-store';

/**
 * The search caches' memory (audit: an enterprise scope's union index was kept
 * per scope and per version, so every publish and every new member's first
 * search left a full index behind). Pure: an in-memory page store, no stack.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const doc = (kb: string, id: string, body: string): PageDoc => ({
  _id: `${kb}:${id}`, page_id: id, account_id: 'acct', kb_id: kb, document_id: 'd', build_id: 'b', title: id, summary: '', tags: [], aliases: [], links: [],
  body, confidence: 0.9, needs_review: false, source: { r2_key: 'k', filename: 'f.md', locator: '#', compiled_at: '', model: 'rules' }, outgoing_links: [], created_at: new Date(),
});

/** Bases in memory; each load hands out fresh copies (as Mongo does) and is counted. */
function memoryStore() {
  const bases = new Map<string, { version: number; docs: PageDoc[] }>();
  const loads: string[] = [];
  const store = {
    version: async (ref: BaseRef) => bases.get(baseKey(ref))?.version ?? 0,
    livePages: async (ref: BaseRef) => {
      loads.push(ref.kb_id);
      return structuredClone(bases.get(baseKey(ref))?.docs ?? []);
    },
  } as unknown as PageStore;
  const put = (kb: string, docs: PageDoc[]) => bases.set(`acct/${kb}`, { version: (bases.get(`acct/${kb}`)?.version ?? 0) + 1, docs });
  return { store, put, loads };
}
const ref = (kb: string): BaseRef => ({ account_id: 'acct', kb_id: kb });
const words = (n: number, w: string) => Array.from({ length: n }, (_, i) => `${w}${i % 50} flow`).join(' ');

test('the cache keeps bases within its memory budget, dropping the least recently searched first', async (t) => {
  const { store, put, loads } = memoryStore();
  for (const kb of ['a', 'b', 'c']) put(kb, Array.from({ length: 40 }, (_, i) => doc(kb, `p${i}`, words(200, kb))));
  // Measure one base's estimate, then allow two.
  const probe = new CorpusCache(store, { budgetBytes: 2 ** 40 });
  await (await probe.get(ref('a'))).searchIndex();
  const one = probe.bytes;
  t.true(one > 40 * 1000, `estimate ${one}`);
  loads.length = 0;

  const cache = new CorpusCache(store, { budgetBytes: Math.floor(one * 2.5) });
  const retrieval = new Retrieval(cache);
  for (const kb of ['a', 'b']) await retrieval.search([ref(kb)], 'flow', { limit: 5, offset: 0 });
  await retrieval.search([ref('a')], 'flow', { limit: 5, offset: 0 }); // a is now the most recent
  await retrieval.search([ref('c')], 'flow', { limit: 5, offset: 0 }); // over budget: b goes
  t.true(cache.bytes <= one * 2.5, `${cache.bytes} within ${one * 2.5}`);
  t.deepEqual(loads, ['a', 'b', 'c']);
  await retrieval.search([ref('a')], 'flow', { limit: 5, offset: 0 });
  await retrieval.search([ref('c')], 'flow', { limit: 5, offset: 0 });
  t.deepEqual(loads, ['a', 'b', 'c'], 'a and c stayed');
  await retrieval.search([ref('b')], 'flow', { limit: 5, offset: 0 });
  t.deepEqual(loads, ['a', 'b', 'c', 'b'], 'b was dropped and is read again');

  // A base larger than the whole budget is still searched.
  const tiny = new Retrieval(new CorpusCache(store, { budgetBytes: 1 }));
  t.is((await tiny.search([ref('a'), ref('b')], 'flow', { limit: 5, offset: 0 })).total, 80);
});

test('a search over several bases keeps no copy of them: an old version is let go once the base moved on, and a new scope adds nothing', async (t) => {
  const { store, put } = memoryStore();
  put('team', Array.from({ length: 30 }, (_, i) => doc('team', `t${i}`, words(100, 'team'))));
  put('kb_a', [doc('kb_a', 'old', 'the first version of a flow page')]);
  const cache = new CorpusCache(store, { budgetBytes: 2 ** 30 });
  const retrieval = new Retrieval(cache);
  const first = await retrieval.search([ref('kb_a'), ref('team')], 'first flow', { limit: 5, offset: 0 });
  t.is(first.hits[0].page.id, 'old');
  const oldPage = new WeakRef(first.hits[0].page);
  first.hits.length = 0;

  put('kb_a', [doc('kb_a', 'new', 'the second version of a flow page')]);
  const second = await retrieval.search([ref('kb_a'), ref('team')], 'second flow', { limit: 5, offset: 0 });
  t.is(second.hits[0].page.id, 'new');
  t.is(second.total, 31);
  await new Promise((r) => setImmediate(r));
  gc();
  t.is(oldPage.deref(), undefined, 'the old version\'s pages are not held by any cache');

  const held = cache.bytes;
  // Other scopes over the same bases (a member's own base with the team's) add only their own base.
  for (let m = 0; m < 5; m++) {
    put(`own${m}`, []);
    await retrieval.search([ref(`own${m}`), ref('team'), ref('kb_a')], 'flow', { limit: 5, offset: 0 });
  }
  t.true(cache.bytes - held < 5 * 8192, `${cache.bytes - held} bytes for five empty bases`);
});
