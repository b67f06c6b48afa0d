// Issue 22 item 1, fairness between accounts on the knowledge queue: builds carry their account as
// Temporal's fairness key (capabilities/knowledge/ingestion.ts), and the dev server dispatches by key
// (dev/scripts/lib/services.ts). Account A's backlog of builds delays account B's one build by at most
// the build that was running when B uploaded. The knowledge worker here runs one activity at a time
// (WORKER_MAX_ACTIVITIES=1), so the order is the dispatch order.
import test from 'ava';
import { startGateway } from '../helpers/stack';
import { uploadJson, waitBuild } from '../knowledge/kit';
import type { KbBuildDoc } from '../../capabilities/knowledge/store';

const manual = (name: string, sections: number) =>
  [`# ${name}`, '', ...Array.from({ length: sections }, (_, i) => [`## ${name} part ${i}`, '', `Part ${i} of ${name}: ${'how the service is run, written out in full. '.repeat(30)}`, '']).flat()].join('\n');

test('account A uploads ten documents, then account B one: B\'s build finishes after at most two of A\'s', async (t) => {
  t.timeout(400_000);
  const gw = await startGateway({ WORKER_MAX_ACTIVITIES: '1' }, { worker: true });
  try {
    const a = await gw.newAccount({ name: 'A' });
    const b = await gw.newAccount({ name: 'B' });
    // A's ten uploads at once: its backlog is queued before much of it can run.
    const uploads = await Promise.all(Array.from({ length: 10 }, (_, i) => uploadJson(gw, a.id, 'default', { filename: `a-${i}.md`, content: manual(`A ${i}`, 6) })));
    for (const r of uploads) t.is(r.status, 202, JSON.stringify(r.body));
    const aBuilds = uploads.map((r) => r.body.id as string);
    // B uploads once A's first build runs (A's backlog is behind it).
    for (let i = 0; ; i++) {
      if ((await gw.deps.db.KbBuild.countDocuments({ _id: { $in: aBuilds }, state: { $ne: 'queued' } })) > 0) break;
      if (i > 1200) throw new Error('A\'s first build did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
    const before = await gw.deps.db.KbBuild.countDocuments({ _id: { $in: aBuilds }, state: 'succeeded' });
    const rb = await uploadJson(gw, b.id, 'default', { filename: 'b.md', content: manual('B', 6) });
    t.is(rb.status, 202);
    const bBuild = await waitBuild(gw, b.id, 'default', rb.body.id, 300_000);
    t.is(bBuild.state, 'succeeded');
    const bDone = (await gw.deps.db.KbBuild.findById(rb.body.id).lean<KbBuildDoc>())!.finished_at!;

    for (const id of aBuilds) t.is((await waitBuild(gw, a.id, 'default', id, 300_000)).state, 'succeeded');
    const aDocs = await gw.deps.db.KbBuild.find({ _id: { $in: aBuilds } }).lean<KbBuildDoc[]>();
    const aheadOfB = aDocs.filter((d) => d.finished_at! <= bDone).length - before;
    t.log(`A's builds finished before B's: ${before} before B uploaded, ${aheadOfB} while B waited, ${aDocs.length - before - aheadOfB} after`);
    // B waits for the build running when it uploaded, and at most one more: a compile of A's that took the
    // slot before B's build reached the queue, whose publish then goes first (publishes run ahead of
    // compiles: workflows/kb-build.ts).
    t.true(aheadOfB <= 2, `B waited for ${aheadOfB} of A's builds`);
    t.true(aDocs.length - before - aheadOfB >= 5, 'most of A\'s backlog ran after B (the test is not vacuous)');
  } finally {
    await gw.close();
  }
});

test('an account\'s compiled build is published ahead of the compiles queued behind it', async (t) => {
  t.timeout(400_000);
  const gw = await startGateway({ WORKER_MAX_ACTIVITIES: '1' }, { worker: true });
  try {
    const a = await gw.newAccount({ name: 'A' });
    const uploads = await Promise.all(Array.from({ length: 6 }, (_, i) => uploadJson(gw, a.id, 'default', { filename: `p-${i}.md`, content: manual(`P ${i}`, 6) })));
    for (const r of uploads) t.is(r.status, 202, JSON.stringify(r.body));
    const ids = uploads.map((r) => r.body.id as string);
    for (const id of ids) t.is((await waitBuild(gw, a.id, 'default', id, 300_000)).state, 'succeeded');
    const docs = (await gw.deps.db.KbBuild.find({ _id: { $in: ids } }).lean<KbBuildDoc[]>()).sort((x, y) => +x.started_at! - +y.started_at!);
    const firstDone = Math.min(...docs.map((d) => +d.finished_at!));
    const startedBefore = docs.filter((d) => +d.started_at! < firstDone).length;
    t.log(`compiles started before the first build was published: ${startedBefore} of ${docs.length}`);
    // The slot freed by the first compile may go to the next compile before the first build's publish is
    // scheduled; after that, the publish goes first. Without the priority every compile ran first.
    t.true(startedBefore <= 3, `${startedBefore} compiles started before the first publish`);
  } finally {
    await gw.close();
  }
});
