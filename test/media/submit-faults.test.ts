import test, { type ExecutionContext } from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import type { TaskDocument } from '../../domain/media/task';
import type { ApplyResult, Wallet } from '../../capabilities/accounts/wallet';

/**
 * A submission whose hold or workflow start gets no answer (Redis restarting
 * after the hold's script ran, a reply lost, Temporal failing after it
 * started the workflow) leaves no money stuck and one usage row: the hold is
 * asked again (same op id), and a task that cannot be accepted is closed as
 * not started and released exactly as a refunding settlement would be. The
 * faults are injected around the real wallet script and the real workflow
 * start of an in-process gateway (no worker: workflows never run here).
 */
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway();
});
test.after.always(async () => gw?.close());

const BODY = { model: 'gpt-image-1', prompt: 'a lighthouse', n: 1, async: true };

/** Routes every hold (reserve) call through `onHold`, with its number (1-based per submission) and the real call. */
function interceptHolds(onHold: (call: number, real: () => Promise<ApplyResult>) => Promise<ApplyResult>): { restore: () => void; calls: () => number } {
  const wallet = gw.deps.wallet as Wallet;
  const real = wallet.applyMarkedAhead.bind(wallet);
  let calls = 0;
  wallet.applyMarkedAhead = async (op, opts) => (op.kind === 'reserve' ? onHold(++calls, () => real(op, opts)) : real(op, opts));
  return {
    restore: () => {
      wallet.applyMarkedAhead = real;
    },
    calls: () => calls,
  };
}

/** Lets the real hold script run, then fails the calls named by `fail` (1-based per submission) as a lost answer would. */
function faultyHolds(fail: (call: number) => boolean): () => void {
  return interceptHolds(async (call, real) => {
    if (!fail(call)) return real();
    // The first failing call runs the script (its answer is lost); later ones never reach Redis.
    if (call === 1) await real();
    throw new Error('Connection is closed.');
  }).restore;
}

async function account() {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  return { accountId: a.id, keyId: k.id, key: k.key, balance: await gw.deps.wallet.balance(a.id) };
}

async function submit(key: string) {
  const r = await fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(BODY),
  });
  return { status: r.status, trace: r.headers.get('x-gateway-trace')!, body: (await r.json()) as any };
}

/** Submit with a fault in place, then take the fault away, whatever the submission did. */
async function submitUnder(key: string, restore: () => void) {
  try {
    return await submit(key);
  } finally {
    restore();
  }
}

async function books(accountId: string, keyId: string, requestId: string) {
  await gw.flushRows();
  const tasks = await gw.deps.db.Task.find({ request_id: requestId }).lean<TaskDocument[]>();
  const ledger = await gw.deps.db.Ledger.find({ ref: { $in: tasks.map((t) => t._id) } }).lean();
  const holds = await gw.deps.db.Ledger.find({ account_id: accountId, kind: 'reserve' }).lean();
  const rows = await gw.deps.db.Usage.find({ request_id: requestId }).lean();
  return {
    tasks, rows,
    ops: ledger.map((l) => l.kind).sort().join(','),
    holdsWithoutTask: holds.filter((h) => !tasks.some((t) => t._id === h.ref)).length,
    balance: await gw.deps.wallet.balance(accountId),
    spend: await gw.deps.wallet.keySpend(keyId),
  };
}

type Books = Awaited<ReturnType<typeof books>>;

/** A task closed as not started: held and released once, nothing charged, one usage row, the workflow that did start terminated. */
async function assertClosedNotStarted(t: ExecutionContext, b: Books, balance: number, why: string): Promise<void> {
  t.is(b.tasks.length, 1);
  t.is(b.tasks[0].state, 'failed');
  t.is(b.tasks[0].error_code, 'not_started');
  t.is(b.ops, 'reserve,settle', 'held and released, once each');
  t.is(b.balance, balance);
  t.is(b.spend, 0);
  t.is(b.rows.length, 1);
  const desc = await gw.deps.temporal.workflow.getHandle(b.tasks[0]._id).describe();
  t.is(desc.status.name, 'TERMINATED', why);
}

type Start = TestGateway['deps']['temporal']['workflow']['start'];

/** Routes every workflow start through `fake` (with the real one); returns what puts the real one back. */
function fakeStarts(fake: (real: Start, ...args: Parameters<Start>) => ReturnType<Start>): () => void {
  const wf = gw.deps.temporal.workflow;
  const real = wf.start.bind(wf) as Start;
  wf.start = ((...args: Parameters<Start>) => fake(real, ...args)) as Start;
  return () => {
    wf.start = real;
  };
}

test.serial('a hold whose answer was lost is asked again: the task is accepted with one hold', async (t) => {
  const { accountId, keyId, key, balance } = await account();
  const restore = faultyHolds((call) => call === 1);
  const res = await submitUnder(key, restore);
  t.is(res.status, 200, JSON.stringify(res.body));
  const b = await books(accountId, keyId, res.trace);
  t.is(b.tasks.length, 1);
  t.is(b.tasks[0]._id, res.body.id);
  t.is(b.tasks[0].state, 'queued');
  t.is(b.ops, 'reserve', 'one hold, applied once');
  t.is(b.balance, balance - b.tasks[0].reserved_nano);
  t.is(b.rows.length, 1, 'one usage row: the task in flight');
  t.is(b.rows[0].status, 'in_flight');
});

test.serial('a hold that never answers: the task is closed as not started, its hold released once, one usage row', async (t) => {
  const { accountId, keyId, key, balance } = await account();
  // The script runs, then Redis answers nothing for the whole retry budget (a first call and 7 retries); the
  // release's own call goes through.
  const restore = faultyHolds((call) => call <= 8);
  const res = await submitUnder(key, restore);
  t.is(res.status, 500, JSON.stringify(res.body));
  t.truthy(res.body.error?.message, 'an error in the endpoint\'s shape');
  const b = await books(accountId, keyId, res.trace);
  t.is(b.tasks.length, 1, 'the task is kept (its hold was on)');
  t.is(b.tasks[0].state, 'failed');
  t.is(b.tasks[0].error_code, 'not_started');
  t.is(b.tasks[0].release_pending, false);
  t.is(b.ops, 'reserve,settle', 'held and released, once each');
  t.is(b.holdsWithoutTask, 0);
  t.is(b.balance, balance, 'nothing charged');
  t.is(b.spend, 0);
  t.is(b.rows.length, 1, 'one usage row for the call');
  t.is(b.rows[0].status, 'error');
  t.is(b.rows[0].cost_nano, 0);
});

test.serial('a hold that never reached Redis and no longer fits at the release: refused, nothing refunded, the task and its row final', async (t) => {
  const { accountId, keyId, key, balance } = await account();
  const holds = interceptHolds(async (call, real) => {
    // The submission's hold never reaches Redis (a first call and 7 retries); before the release's own call
    // the wallet is spent elsewhere, so the hold it asks for (to know it is on) is refused.
    if (call <= 8) throw new Error('Connection is closed.');
    await gw.deps.wallet.apply({ opId: `drain-${accountId}`, accountId, keyId: null, kind: 'charge', amountNano: -balance, keySpendNano: 0, ref: null });
    return real();
  });
  const res = await submitUnder(key, holds.restore);
  t.is(res.status, 500, JSON.stringify(res.body));
  t.is(holds.calls(), 9, 'the release asked for the hold once more');
  const b = await books(accountId, keyId, res.trace);
  t.is(b.tasks.length, 1);
  t.is(b.tasks[0].state, 'failed');
  t.is(b.tasks[0].error_code, 'not_started');
  t.is(b.tasks[0].cost_nano, 0);
  t.is(b.tasks[0].release_pending, false);
  t.is(b.ops, '', 'nothing held, nothing refunded');
  t.is(b.balance, 0, 'only the other spending left the wallet');
  t.is(b.spend, 0);
  t.is(b.rows.length, 1, 'one usage row for the call');
  t.is(b.rows[0].status, 'error');
  t.is(b.rows[0].cost_nano, 0);
  t.is(b.rows[0].error_code, 'not_started');
});

test.serial('a release that cannot finish now is finished by the orphan sweep', async (t) => {
  const { accountId, keyId, key, balance } = await account();
  // Redis stays out past the submission and the release (8 + 7 calls): the hold stays on until the sweep runs.
  const restore = faultyHolds(() => true);
  const res = await submitUnder(key, restore);
  t.is(res.status, 500);
  let b = await books(accountId, keyId, res.trace);
  t.is(b.tasks[0].state, 'failed');
  t.is(b.tasks[0].release_pending, true);
  t.is(b.balance, balance - b.tasks[0].reserved_nano, 'the hold is still on');
  const { MediaTasks } = await import('../../capabilities/media/media-tasks');
  await new MediaTasks(gw.deps).resumeOrphans(2 * 60_000);
  b = await books(accountId, keyId, res.trace);
  t.is(b.tasks[0].release_pending, false);
  t.is(b.ops, 'reserve,settle');
  t.is(b.balance, balance);
  t.is(b.spend, 0);
  t.is(b.rows.length, 1);
  t.is(b.rows[0].status, 'error');
});

test.serial('a workflow start whose answer was lost: the workflow is terminated, the hold released, one usage row', async (t) => {
  const { accountId, keyId, key, balance } = await account();
  // The first start reaches the server (its answer is lost); the retries find Temporal unreachable.
  let starts = 0;
  const res = await submitUnder(key, fakeStarts(async (real, ...args) => {
    if (++starts === 1) await real(...args);
    throw new Error('14 UNAVAILABLE: connection reset');
  }));
  t.is(res.status, 500, JSON.stringify(res.body));
  await assertClosedNotStarted(t, await books(accountId, keyId, res.trace), balance, 'the workflow that did start never runs the task');
});

test.serial('a task insert whose answer was lost is sent again: one task, one usage row, even after the orphan sweep', async (t) => {
  const { accountId, keyId, key, balance } = await account();
  const tasks = gw.deps.db.Task.collection;
  const realInsert = tasks.insertOne.bind(tasks);
  let creates = 0;
  (tasks as any).insertOne = async (...args: unknown[]) => {
    const first = ++creates === 1;
    const r = await (realInsert as (...a: unknown[]) => Promise<unknown>)(...args);
    if (first) throw new Error('connection 3 to 127.0.0.1:27017 closed');
    return r;
  };
  const res = await submitUnder(key, () => {
    (tasks as any).insertOne = realInsert;
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(creates, 2, 'the insert whose answer was lost was sent again, and its duplicate taken as written');
  // The document goes to the driver as built, past mongoose's defaults: every field the schema gives a
  // default must be in it (one rule, the schema's; a field added there with a default and not set by the
  // submission fails here).
  const stored = (await gw.deps.db.Task.collection.findOne({ request_id: res.trace } as never)) as Record<string, unknown> | null;
  for (const [path, type] of Object.entries(gw.deps.db.Task.schema.paths)) {
    if (path.includes('.') || (type as { defaultValue?: unknown }).defaultValue === undefined) continue;
    t.true(stored !== null && path in stored, `the stored task has ${path}`);
  }
  // The sweep resumes tasks left queued without a workflow (here at once): none may be this call's second task or row.
  const { MediaTasks } = await import('../../capabilities/media/media-tasks');
  await new MediaTasks(gw.deps).resumeOrphans(0);
  const b = await books(accountId, keyId, res.trace);
  t.is(b.tasks.length, 1);
  t.is(b.ops, 'reserve');
  t.is(b.balance, balance - b.tasks[0].reserved_nano);
  t.is(b.rows.length, 1, 'one usage row for the call');
});

test.serial('the orphan sweep starts a task whose gateway is still retrying its start, and the gateway then gives up: closed as not started, one hold, one release', async (t) => {
  const { accountId, keyId, key, balance } = await account();
  const { MediaTasks } = await import('../../capabilities/media/media-tasks');
  // The gateway's starts never reach Temporal; during its first one the sweep (which starts for real) finds the task.
  let sweeping = false;
  let gatewayStarts = 0;
  let resumed = -1;
  const res = await submitUnder(key, fakeStarts(async (real, ...args) => {
    if (sweeping) return real(...args);
    if (++gatewayStarts === 1) {
      sweeping = true;
      try {
        resumed = await new MediaTasks(gw.deps).resumeOrphans(0);
      } finally {
        sweeping = false;
      }
    }
    throw new Error('14 UNAVAILABLE: connection reset');
  }));
  t.is(resumed, 1, 'the sweep started the task while its gateway was still in its accept path');
  t.is(res.status, 500, JSON.stringify(res.body));
  await assertClosedNotStarted(t, await books(accountId, keyId, res.trace), balance, 'the workflow the sweep started never runs the task');
});

test.serial('the orphan sweep starts a task whose gateway is still retrying its start, and the gateway\'s retry then gets through: accepted, one hold, one workflow', async (t) => {
  const { accountId, keyId, key, balance } = await account();
  const { MediaTasks } = await import('../../capabilities/media/media-tasks');
  let gatewayStarts = 0;
  let sweeping = false;
  const res = await submitUnder(key, fakeStarts(async (real, ...args) => {
    if (sweeping || ++gatewayStarts > 1) return real(...args); // the retry meets the workflow the sweep started
    sweeping = true;
    try {
      await new MediaTasks(gw.deps).resumeOrphans(0);
    } finally {
      sweeping = false;
    }
    throw new Error('14 UNAVAILABLE: connection reset');
  }));
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(gatewayStarts, 2);
  const b = await books(accountId, keyId, res.trace);
  t.is(b.tasks.length, 1);
  t.is(b.tasks[0].state, 'queued');
  t.is(b.ops, 'reserve', 'one hold');
  t.is(b.balance, balance - b.tasks[0].reserved_nano);
  t.is(b.rows.length, 1);
  t.is((await gw.deps.temporal.workflow.getHandle(b.tasks[0]._id).describe()).status.name, 'RUNNING');
});
