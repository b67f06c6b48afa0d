import test, { type ExecutionContext } from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import type { TaskDocument } from '../../domain/media/task';

/**
 * One outcome per task when two settlements race (capabilities/media/settlement-decision.ts).
 *
 * A cancellation (Temporal UI) that lands while a synchronous vendor is
 * answering. The workflow's first task runs the submission (and, since the
 * submission settles a synchronous answer itself, the settlement) as local
 * activities; the server refuses that task's completion because the cancel
 * request came meanwhile, so the workflow runs again from the start, sees the
 * cancel first and settles "cancelled". Whatever was settled first must stand
 * for the task, its usage row and the wallet alike: one outcome, one charge.
 */
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { simulator: true, worker: true });
});
test.after.always(async () => gw?.close());

async function newestTask(since: number): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const doc = await gw.deps.db.Task.findOne({ created_at: { $gte: new Date(since) } }).sort({ created_at: -1 }).lean<{ _id: string }>();
    if (doc) return doc._id;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no task');
}

for (const model of ['gpt-image-1', 'seedream-4-0']) {
  test.serial(`${model}: cancelled while the vendor answers: the task, its usage row and the wallet tell one outcome`, async (t) => {
    t.timeout(120_000);
    const a = await gw.newAccount();
    const key = (await gw.newKey(a.id)).key;
    const before = await gw.deps.wallet.balance(a.id);
    const channels = model === 'gpt-image-1' ? ['openai-images-a', 'openai-images-b', 'openai-images-c'] : ['seedream-images-a', 'seedream-images-b', 'seedream-images-c'];
    for (const channel of channels) await gw.control('POST', '/media/faults', { channel, fault: { type: 'delay', ms: 2_000 } });
    try {
      const t0 = Date.now();
      const answered = fetch(`${gw.url}/v1/images/generations`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, prompt: 'a fox, cancelled or not', async: true }),
      }).then((r) => r.text());
      const id = await newestTask(t0);
      for (let i = 0; i < 100; i++) {
        if (await gw.deps.temporal.workflow.getHandle(id).describe().then(() => true, () => false)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Promise((r) => setTimeout(r, 500));
      await gw.deps.temporal.workflow.getHandle(id).cancel();
      const result = await gw.deps.temporal.workflow.getHandle(id).result() as { state: string; costNano: number };
      await answered;
      const task = (await gw.deps.db.Task.findById(id).lean<TaskDocument>())!;
      await gw.flushRows();
      const usage = await gw.deps.db.Usage.findById(id).lean<{ status: string; cost_nano: number }>();
      const after = await gw.deps.wallet.balance(a.id);
      t.log(`workflow ${result.state} ${result.costNano}; task ${task.state} ${task.cost_nano}; usage ${usage?.status} ${usage?.cost_nano}; wallet moved ${before - after}`);
      t.is(before - after, task.cost_nano, 'the wallet was charged what the task says it cost');
      t.is(usage?.cost_nano, task.cost_nano, 'the usage row says what the task cost');
      t.is(usage?.status, task.state === 'succeeded' ? 'success' : 'error');
      t.is(result.state, task.state, 'the workflow ended as the task did');
      t.is(result.costNano, task.cost_nano);
      t.true(task.state === 'succeeded' ? task.cost_nano > 0 : task.cost_nano === 0);
    } finally {
      await gw.control('DELETE', '/media/faults');
    }
  });
}

async function startLostAfterSettlement(t: ExecutionContext, opts: { proposalFails: boolean }) {
  t.timeout(120_000);
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const before = await gw.deps.wallet.balance(a.id);
  const wf = gw.deps.temporal.workflow;
  const realStart = wf.start.bind(wf);
  // The start reaches the server and the worker settles the task (a synchronous vendor answers at once);
  // then the answer is lost and the retries find Temporal unreachable.
  let starts = 0;
  wf.start = (async (...args: Parameters<typeof wf.start>) => {
    if (++starts === 1) {
      const handle = await realStart(...args);
      await handle.result();
      if (opts.proposalFails) failNextProposal();
    }
    throw new Error('14 UNAVAILABLE: connection reset');
  }) as typeof wf.start;
  let res: Response;
  try {
    res = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-image-1', prompt: 'a fox, started or not', async: true }),
    });
  } finally {
    wf.start = realStart;
  }
  const body = (await res.json()) as { id: string };
  t.is(res.status, 200, JSON.stringify(body));
  const task = (await gw.deps.db.Task.findById(body.id).lean<TaskDocument>())!;
  await gw.flushRows();
  const usage = await gw.deps.db.Usage.find({ _id: body.id }).lean<Array<{ status: string; cost_nano: number }>>();
  const after = await gw.deps.wallet.balance(a.id);
  t.like(task, { state: 'succeeded', error_code: null });
  t.true(task.cost_nano > 0);
  t.is(before - after, task.cost_nano, 'charged once, what the task says');
  t.is(usage.length, 1);
  t.like(usage[0], { status: 'success', cost_nano: task.cost_nano });
  t.is((await wf.getHandle(body.id).describe()).status.name, 'COMPLETED', 'the workflow was left to finish');
  t.not(task.release_pending, true);
  if (opts.proposalFails) t.is(proposalsFailed.n, 1, 'the gateway\'s proposal met the fault');
}

/** The gateway's next settlement proposal fails as with Redis unreachable (capabilities/media/settlement-decision.ts). */
const proposalsFailed = { n: 0 };
function failNextProposal(): void {
  const redis = gw.deps.redis as unknown as { eval: (...args: unknown[]) => Promise<unknown> };
  const real = redis.eval;
  redis.eval = async (...args: unknown[]) => {
    if (!String(args[2]).startsWith('taskset:')) return real.apply(gw.deps.redis, args);
    redis.eval = real;
    proposalsFailed.n++;
    throw new Error('Connection is closed.');
  };
}

test.serial('a workflow start whose answer was lost, after the workflow ran and settled the task: the task stands, charged once, and the client gets it', async (t) => {
  await startLostAfterSettlement(t, { proposalFails: false });
});

test.serial('the same with Redis out for the gateway\'s proposal: the task is closed as not started, then its release finds the settlement and puts it back', async (t) => {
  await startLostAfterSettlement(t, { proposalFails: true });
});
