import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { startGateway, type TestGateway } from '../helpers/stack';
import { bundleWorkflows } from '../../dev/scripts/bundle-workflows';
import { livePages, uploadJson, waitBuild } from './kit';

/**
 * A real worker process killed with SIGKILL in the middle of a build (after
 * it wrote the first of several pages; right after the pointer flip) and
 * replaced by a fresh one: the build finishes once, readers see the old
 * pages whole until the flip and the new ones whole after, never a mix, a
 * half or a duplicate.
 */
let bundle: string;
test.before(async () => {
  bundle = process.env.WORKFLOW_BUNDLE ?? (await bundleWorkflows(`.data/kb-crash-bundle-${process.pid}.js`));
});

function startWorker(gw: TestGateway, failpoints: string): ChildProcess {
  const c = gw.config;
  const env = {
    WORKFLOW_BUNDLE: bundle,
    ...process.env,
    MONGO_URL: c.MONGO_URL, REDIS_URL: c.REDIS_URL, REDIS_PREFIX: c.REDIS_PREFIX, TEMPORAL_ADDRESS: c.TEMPORAL_ADDRESS,
    TEMPORAL_TASK_QUEUE: c.TEMPORAL_TASK_QUEUE, ADMIN_TOKEN: c.ADMIN_TOKEN, KEY_ENCRYPTION_KEY: c.KEY_ENCRYPTION_KEY,
    SIMULATOR_URL: c.SIMULATOR_URL, LOG_LEVEL: 'warn', FAILPOINTS: failpoints,
  };
  // Builds run on the knowledge queue's worker (domain/task-queues.ts).
  return spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts', '--queue=knowledge'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
}

function exited(p: ChildProcess, timeoutMs: number): Promise<NodeJS.Signals | number | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('worker did not exit in time')), timeoutMs);
    p.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(signal ?? code);
    });
  });
}

const doc = (version: string) =>
  ['# Manual', '', `Manual ${version}: how the service is run.`, '', ...['Install', 'Configure', 'Operate', 'Upgrade'].flatMap((s) => [`## ${s}`, '', `${s} steps of ${version}, written out in full so that the section is a page of its own.`, ''])].join('\n');

for (const failpoint of ['kb.build.mid-pages', 'kb.publish.after-flip']) {
  test(`SIGKILL at ${failpoint}: the build finishes once, readers never see half of it`, async (t) => {
    t.timeout(400_000);
    const gw = await startGateway({}, { simulator: true });
    const workers: ChildProcess[] = [];
    try {
      const a = await gw.newAccount();
      const first = startWorker(gw, '');
      workers.push(first);
      const v1 = await uploadJson(gw, a.id, 'default', { filename: 'manual.md', content: doc('v1') });
      t.is((await waitBuild(gw, a.id, 'default', v1.body.id, 150_000)).state, 'succeeded');
      first.kill('SIGKILL');
      await exited(first, 10_000);
      const v1Pages = await livePages(gw, a.id);
      t.is(v1Pages.length, 5);

      const crashing = startWorker(gw, failpoint);
      workers.push(crashing);
      const v2 = await uploadJson(gw, a.id, 'default', { filename: 'manual.md', content: doc('v2') });
      t.is(v2.status, 202);
      t.is(await exited(crashing, 150_000), 'SIGKILL');

      const mid = await livePages(gw, a.id);
      const build = (await gw.admin('GET', `/accounts/${a.id}/kbs/default/builds/${v2.body.id}`)).body;
      if (failpoint === 'kb.build.mid-pages') {
        // Some of v2's pages are written, none is visible: readers see v1 whole.
        t.true((await gw.deps.db.Page.countDocuments({ build_id: v2.body.id })) >= 1);
        t.deepEqual(mid.map((p) => p._id), v1Pages.map((p) => p._id));
        t.is(build.state, 'running');
      } else {
        // The flip happened: readers see v2 whole.
        t.deepEqual(mid.map((p) => p.build_id), Array(5).fill(v2.body.id));
      }

      workers.push(startWorker(gw, ''));
      const end = await waitBuild(gw, a.id, 'default', v2.body.id, 150_000);
      t.is(end.state, 'succeeded', JSON.stringify(end));
      t.is(end.pages_made, 5);
      t.true(end.live);
      const after = await livePages(gw, a.id);
      t.is(after.length, 5);
      t.true(after.every((p) => p.build_id === v2.body.id && p.body.includes('v2')));
      // Same sections, same ids across the rebuild; no duplicate or stray page stored.
      t.deepEqual(after.map((p) => p.page_id), v1Pages.map((p) => p.page_id));
      t.is(await gw.deps.db.Page.countDocuments({ document_id: end.document_id }), 5);
      t.is(await gw.deps.db.KbBuild.countDocuments({ document_id: end.document_id }), 2);
      const history = await gw.deps.temporal.workflow.getHandle(v2.body.id).result();
      t.deepEqual(history, { state: 'succeeded', pages: 5 });
    } finally {
      for (const w of workers) w.kill('SIGKILL');
      await gw.close();
    }
  });
}
