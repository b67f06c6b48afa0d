import test from 'ava';
import type { AddressInfo } from 'node:net';
import { startGateway, type TestGateway } from '../helpers/stack';
import { buildDeps } from '../../capabilities/bootstrap';
import { createApp } from '../../gateway/app';
import { createLogger } from '../../platform/logger';
import { seedDocument, seedTeamBase } from './seed';

/**
 * Indexes are per process, keyed by each base's version in Redis: a rebuild
 * or removal that went live anywhere is seen by the next search on any other
 * gateway instance; searching several bases merges them into one ranking.
 */

let gw: TestGateway;
let second: { url: string; close(): Promise<void> };
let key: string;
let acctId: string;

test.before(async () => {
  gw = await startGateway();
  const deps = await buildDeps(gw.config, createLogger(gw.config.LOG_LEVEL));
  const server = createApp(deps).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  second = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await deps.close();
    },
  };
  const acct = await gw.newAccount({ name: 'multi' });
  acctId = acct.id;
  key = (await gw.newKey(acct.id)).key;
});
test.after.always(async () => {
  await second?.close();
  await gw?.close();
});

async function search(base: string, q: string) {
  const res = await fetch(`${base}/api/v1/ext/wiki/search?q=${encodeURIComponent(q)}`, { headers: { authorization: `Bearer ${key}` } });
  return (await res.json()) as any;
}

test('a rebuild through one instance is seen by the next search on the other', async (t) => {
  const { documentId } = await seedDocument(gw.deps, acctId, 'default', [{ id: 'pg_policy', title: 'Travel policy', body: 'Economy class for flights under six hours.' }]);
  // Both instances have built and cached their index for this version.
  t.is((await search(gw.url, 'economy')).total_hits, 1);
  t.is((await search(second.url, 'economy')).total_hits, 1);

  // A new build of the same document replaces the page (same id, new text).
  await seedDocument(gw.deps, acctId, 'default', [{ id: 'pg_policy', title: 'Travel policy', body: 'Business class for flights over four hours.' }], { documentId });
  for (const url of [second.url, gw.url]) {
    t.is((await search(url, 'economy')).total_hits, 0, url);
    const hit = (await search(url, 'business')).results[0];
    t.is(hit.id, 'pg_policy');
    t.regex(hit.snippet, /Business class/);
  }

  // Removing the document hides its pages everywhere.
  await gw.deps.db.KbDocument.updateOne({ _id: documentId }, { $set: { deleted_at: new Date() } });
  await gw.deps.pages.bumpVersion({ account_id: acctId, kb_id: 'default' });
  t.is((await search(second.url, 'business')).total_hits, 0);
  const page = await fetch(`${second.url}/api/v1/ext/wiki/pages/pg_policy`, { headers: { authorization: `Bearer ${key}` } });
  t.is(page.status, 404);
});

test('a search over several bases ranks them as one collection, with a true total and stable paging', async (t) => {
  const user = (await gw.admin('POST', '/users', { email: 'multi@example.com', name: 'M' })).body;
  const ent = await gw.newAccount({ name: 'Ent', enterprise: true });
  await gw.admin('PUT', `/accounts/${ent.id}/members`, { user_id: user.id, role: 'member' });
  await seedTeamBase(gw.deps, ent.id, 'kb_merge');
  await seedDocument(gw.deps, user.personal_account_id, 'default', Array.from({ length: 15 }, (_, i) => ({
    id: `pg_a${i}`, title: `Personal ${i}`, body: `comet ${'dust '.repeat(i)}`,
  })));
  await seedDocument(gw.deps, ent.id, 'kb_merge', [
    { id: 'pg_best', title: 'Comet', body: 'A comet is an icy body. Comet tails point away from the sun.', aliases: ['comets'] },
    ...Array.from({ length: 10 }, (_, i) => ({ id: `pg_b${i}`, title: `Team ${i}`, body: `a note that mentions a comet once among ${'words '.repeat(i * 3)}` })),
  ]);
  const scope = await gw.deps.kbScope.forUser(user.id);
  t.is(scope.length, 2);
  const all = await gw.deps.retrieval.search(scope, 'comet', { limit: 50, offset: 0 });
  t.is(all.total, 26);
  t.is(all.hits[0].page.id, 'pg_best', 'the best page of either base comes first');
  t.deepEqual([...new Set(all.hits.map((h) => h.page.kb_id))].sort(), ['default', 'kb_merge']);
  for (let i = 1; i < all.hits.length; i++) t.true(all.hits[i - 1].score >= all.hits[i].score);
  const pages = [];
  for (let off = 0; off < 26; off += 7) pages.push(...(await gw.deps.retrieval.search(scope, 'comet', { limit: 7, offset: off })).hits.map((h) => h.page.id));
  t.deepEqual(pages, all.hits.map((h) => h.page.id));
  // The same bases searched alone give the same pages as their share of the union.
  const team = await gw.deps.retrieval.search([scope[1]], 'comet', { limit: 50, offset: 0 });
  t.is(team.total, 11);
});
