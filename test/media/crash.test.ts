import { MockActivityEnvironment } from '@temporalio/testing';
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';
import { bundleWorkflows } from '../../dev/scripts/bundle-workflows';

/**
 * A worker killed with SIGKILL at any point of a task (mid-submit, right after
 * the upstream accepted, mid-poll, between the settle's wallet op and its
 * report) and replaced by a fresh worker leads to one outcome and one charge.
 */
let bundle: string;
test.before(async () => {
  // One bundle for the ten workers this file starts (npm test passes its own).
  bundle = process.env.WORKFLOW_BUNDLE ?? (await bundleWorkflows(`.data/crash-test-bundle-${process.pid}.js`));
});

function startWorker(gw: TestGateway, failpoints: string): ChildProcess {
  const c = gw.config;
  const env = {
    WORKFLOW_BUNDLE: bundle,
    ...process.env,
    MONGO_URL: c.MONGO_URL, REDIS_URL: c.REDIS_URL, REDIS_PREFIX: c.REDIS_PREFIX, TEMPORAL_ADDRESS: c.TEMPORAL_ADDRESS,
    TEMPORAL_TASK_QUEUE: c.TEMPORAL_TASK_QUEUE, ADMIN_TOKEN: c.ADMIN_TOKEN, KEY_ENCRYPTION_KEY: c.KEY_ENCRYPTION_KEY,
    SIMULATOR_URL: c.SIMULATOR_URL, MEDIA_POLL_INTERVAL_MS: String(c.MEDIA_POLL_INTERVAL_MS ?? 100), LOG_LEVEL: 'warn',
    FAILPOINTS: failpoints,
  };
  return spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts', '--queue=media'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
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

async function pollFinal(gw: TestGateway, key: string, id: string, timeoutMs: number): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = await fetch(`${gw.url}/v1/images/generations/${id}`, { headers: { authorization: `Bearer ${key}` } });
    if (r.status !== 202) return r;
    await r.body?.cancel();
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error(`task ${id} did not finish`);
}

/**
 * The account's ledger once `rows` rows are there (or 20 s passed): holds and
 * settlements are written ahead to the journal, which any live process drains
 * (a killed worker's unacknowledged entries are taken over after 10 s).
 */
async function drainedLedger(gw: TestGateway, accountId: string, rows: number) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    await gw.deps.wallet.journal.flush();
    const ledger = await gw.deps.db.Ledger.find({ account_id: accountId }).sort({ _id: 1 }).lean();
    if (ledger.length >= rows || Date.now() > deadline) return ledger;
    await new Promise((res) => setTimeout(res, 250));
  }
}

const scenarios: Array<{ failpoint: string; model: string; upstreamTasks: number }> = [
  { failpoint: 'media.submit.before-upstream', model: 'flux-kontext-pro', upstreamTasks: 1 },
  // The upstream accepted but the worker died before recording its id: the upstream sees a second
  // submission (the vendor is paid twice), the customer is charged once.
  { failpoint: 'media.submit.after-upstream', model: 'flux-kontext-pro', upstreamTasks: 2 },
  { failpoint: 'media.poll.after-upstream', model: 'flux-kontext-pro', upstreamTasks: 1 },
  { failpoint: 'media.settle.after-wallet', model: 'flux-kontext-pro', upstreamTasks: 1 },
  { failpoint: 'media.settle.before-report', model: 'gpt-image-1', upstreamTasks: 1 },
  // A synchronous answer is settled by its submission: killed between the wallet op and the task's final write there.
  { failpoint: 'media.settle.after-wallet', model: 'gpt-image-1', upstreamTasks: 1 },
];

for (const s of scenarios) {
  test(`SIGKILL at ${s.failpoint} (${s.model}): one outcome, one charge`, async (t) => {
    t.timeout(180_000);
    const gw = await startGateway({}, { simulator: true, mediaDelayMs: 300 });
    const workers: ChildProcess[] = [];
    try {
      const a = await gw.newAccount();
      const key = (await gw.newKey(a.id)).key;
      const first = startWorker(gw, s.failpoint);
      workers.push(first);
      const sub = await fetch(`${gw.url}/v1/images/generations`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: s.model, prompt: 'crash test', n: 2, async: true }),
      });
      t.is(sub.status, 200);
      const { id } = (await sub.json()) as { id: string };
      t.is(await exited(first, 150_000), 'SIGKILL');
      const second = startWorker(gw, '');
      workers.push(second);
      const final = await pollFinal(gw, key, id, 120_000);
      t.is(final.status, 200);
      const body = (await final.json()) as { data: unknown[] };
      t.is(body.data.length, 2);

      const price = parseCredits('0.04');
      const ledger = await drainedLedger(gw, a.id, 3);
      t.deepEqual(ledger.map((e) => e._id).sort(), [`${a.id}:grant`, `${id}:reserve`, `${id}:settle`].sort());
      t.is(ledger.filter((e) => e.ref === id).reduce((sum, e) => sum + e.amount_nano, 0), -2 * price);
      t.is(await gw.deps.wallet.balance(a.id), parseCredits('40.44') - 2 * price);
      const task = await gw.deps.db.Task.findById(id).lean();
      t.is(task?.state, 'succeeded');
      t.is(task?.cost_nano, 2 * price);
      await gw.flushRows();
      const rows = await gw.deps.db.Usage.find({ task_id: id }).lean();
      t.is(rows.length, 1);
      t.is(rows[0].status, 'success');
      t.is(rows[0].cost_nano, 2 * price);
      const upstream = (await gw.control('GET', `/media/tasks?channel=${s.model === 'gpt-image-1' ? 'openai-images-a' : 'image-tasks-a'}`)) as { tasks?: unknown[]; submissions?: unknown[] } | unknown[];
      const count = Array.isArray(upstream) ? upstream.length : (upstream.tasks ?? upstream.submissions ?? []).length;
      t.is(count, s.upstreamTasks);
    } finally {
      for (const w of workers) w.kill('SIGKILL');
      await gw.close();
    }
  });
}

test('a gateway that died after writing the task (before or after the hold) leaves a task the sweeper resumes: one charge', async (t) => {
  t.timeout(120_000);
  const gw = await startGateway({}, { simulator: true, worker: true });
  try {
    const { MediaTasks } = await import('../../capabilities/media/media-tasks');
    const { createMediaActivities } = await import('../../activities/media');
    const a = await gw.newAccount();
    const run = Math.random().toString(16).slice(2, 10);
    const [noHold, held, fresh] = [`task_${run}_nohold`, `task_${run}_held`, `task_${run}_fresh`];
    const price = parseCredits('0.04');
    const base = {
      account_id: a.id, key_id: 'key_x', key_name: 'k', key_prefix: 'sk-mgateway-', kind: 'image', endpoint: 'generations',
      model: 'gpt-image-1', state: 'queued', progress: null, input: { model: 'gpt-image-1', prompt: 'orphan', n: 1 },
      quote: { unitType: 'image', unitNano: price, fixedNano: 0, reservedUnits: 1 }, reserved_nano: price, cost_nano: 0,
      unit_count: 0, upstream: null, result: null, final_body: null, final_status: null, error_code: null, error_message: null,
      // Older than the orphan threshold (30 s), within the image budget (280 s).
      request_id: 'req_orphan', created_at: new Date(Date.now() - 150_000), started_at: null, completed_at: null, updated_at: new Date(),
    };
    // One died right after writing the task; the other after its hold too.
    await gw.deps.db.Task.create({ _id: noHold, ...base });
    await gw.deps.db.Task.create({ _id: held, ...base });
    await gw.deps.wallet.apply({ opId: `${held}:reserve`, accountId: a.id, keyId: 'key_x', kind: 'reserve', amountNano: -price, keySpendNano: price, ref: held }, { capNano: null });
    // A fresh task is left alone (its gateway may still be starting it).
    await gw.deps.db.Task.create({ _id: fresh, ...base, created_at: new Date() });
    const acts = createMediaActivities(gw.deps);
    t.is(await new MockActivityEnvironment().run(acts.resumeOrphanTasks, { now: Date.now() }), 2);
    const tasks = new MediaTasks(gw.deps);
    for (const id of [noHold, held]) {
      const done = await tasks.waitSettled(id);
      t.is(done.state, 'succeeded');
      await gw.deps.wallet.journal.flush();
      const ops = await gw.deps.db.Ledger.find({ ref: id }).lean();
      t.deepEqual(ops.map((o) => o._id).sort(), [`${id}:reserve`, `${id}:settle`]);
    }
    t.is(await new MockActivityEnvironment().run(acts.resumeOrphanTasks, { now: Date.now() }), 0);
    t.is(await gw.deps.wallet.balance(a.id), parseCredits('40.44') - 2 * price);
    t.is((await gw.deps.db.Task.findById(fresh).lean())!.state, 'queued');
  } finally {
    await gw.close();
  }
});

test('cancelling a task workflow (as from the Temporal UI) ends it cancelled with a full refund', async (t) => {
  t.timeout(120_000);
  const gw = await startGateway({}, { simulator: true, worker: true });
  try {
    const { MediaTasks } = await import('../../capabilities/media/media-tasks');
    const a = await gw.newAccount();
    const key = (await gw.newKey(a.id)).key;
    await gw.control('POST', '/media/faults', { channel: 'image-tasks-a', fault: { type: 'hang' }, times: 1 });
    const r = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'flux-kontext-pro', prompt: 'cancel me', n: 2, async: true }),
    });
    const { id } = (await r.json()) as { id: string };
    t.is(await gw.deps.wallet.balance(a.id), parseCredits('40.44') - 2 * parseCredits('0.04'));
    // Cancel once the upstream has the task (the workflow is polling).
    for (let i = 0; i < 100 && !(await gw.deps.db.Task.findById(id).lean())?.upstream?.task_id; i++) await new Promise((res) => setTimeout(res, 100));
    await gw.deps.temporal.workflow.getHandle(id).cancel();
    const done = await new MediaTasks(gw.deps).waitSettled(id);
    t.is(done.state, 'cancelled');
    t.is(done.cost_nano, 0);
    t.is(await gw.deps.wallet.balance(a.id), parseCredits('40.44'));
    const poll = await fetch(`${gw.url}/v1/images/generations/${id}`, { headers: { authorization: `Bearer ${key}` } });
    t.not(poll.status, 202);
    t.is(((await poll.json()) as { error: { code: string } }).error.code, 'task_cancelled');
  } finally {
    await gw.close();
  }
});
