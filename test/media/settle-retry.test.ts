import test from 'ava';
import { accountRedisKeys } from '../../capabilities/accounts/store';
import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';
import { MARKER_AFTER_ROW_S } from '../../capabilities/accounts/ledger-journal';
import { Wallet } from '../../capabilities/accounts/wallet';
import { createMediaActivities } from '../../activities/media';
import { factsOf, settleAbsentAt, type SettleInput } from '../../capabilities/media/settlement';
import { FRESH_OP_MS } from '../../capabilities/accounts/wallet';
import type { ProviderOutcome, TaskDocument } from '../../domain/media/task';

/**
 * A task's hold and settlement are applied once whichever worker retries
 * them and whenever: a settle local activity re-run on another worker after
 * the first died (a fresh `Wallet`, so another writer id and other tickets),
 * two workers at once, and a retry after the op's row was drained and its
 * marker expired. The gateway here has no worker: the test is the worker.
 */
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway();
});
test.after.always(async () => gw?.close());

const PRICE = parseCredits('0.04');
const GRANT = parseCredits('40.44');

/** A real async submission (hold written ahead by the gateway); its workflow never runs here. */
async function submit(): Promise<{ accountId: string; keyId: string; task: TaskDocument }> {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  const r = await fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-image-1', prompt: 'a lighthouse', n: 1, async: true }),
  });
  const body = (await r.json()) as { id: string };
  if (r.status !== 200) throw new Error(`submission answered ${r.status}: ${JSON.stringify(body)}`);
  const task = (await gw.deps.db.Task.findById(body.id).lean<TaskDocument>())!;
  return { accountId: a.id, keyId: k.id, task };
}

/** Every other worker's wallet made here: each drains the journal on its own. */
const wallets: Wallet[] = [];

/** Another worker process: its own wallet (writer id, tickets, batches) on the same stores. */
function otherWorker() {
  const wallet = new Wallet(gw.deps.db, gw.deps.redis);
  wallets.push(wallet);
  return { wallet, acts: createMediaActivities({ ...gw.deps, wallet }) };
}

/**
 * The journal drained by every process: another worker's drain may hold entries it took (writing
 * their rows, then cutting their markers) while this one's finds nothing left to take.
 */
async function drainAll(): Promise<void> {
  await Promise.all(wallets.map((w) => w.journal.flush()));
  await gw.deps.wallet.journal.flush();
}

const succeeded: ProviderOutcome = { state: 'succeeded', units: 1, urls: ['https://example.test/a.png'], expiresAt: null };

async function moneyOf(accountId: string, keyId: string, taskId: string) {
  await drainAll();
  const rows = await gw.deps.db.Ledger.find({ ref: taskId }).lean();
  return {
    balance: await gw.deps.wallet.balance(accountId),
    spend: await gw.deps.wallet.keySpend(keyId),
    rows: rows.map((r) => `${r._id}=${r.amount_nano}`).sort(),
    ledger: (await gw.deps.wallet.ledgerTotals(accountId)).balanceNano,
  };
}

test.serial('a settlement retried on a second worker, before and after its row is drained and its marker gone, applies once', async (t) => {
  const { accountId, keyId, task } = await submit();
  t.is(await gw.deps.wallet.balance(accountId), GRANT - PRICE, 'the hold is on');
  const input: SettleInput = { taskId: task._id, outcome: { ...succeeded, units: 0, state: 'failed', errorCode: 'upstream_error', errorMessage: 'x' }, task: factsOf(task) };
  const first = otherWorker();
  t.deepEqual(await first.acts.settleMediaTask(input), { costNano: 0, state: 'failed' });
  t.is(await gw.deps.wallet.balance(accountId), GRANT, 'a failed task refunds its hold');

  // The first worker died before reporting: the local activity runs again on another worker (row maybe not drained yet).
  const second = otherWorker();
  t.not(second.wallet.writer, first.wallet.writer);
  await second.acts.settleMediaTask(input);
  t.is(await gw.deps.wallet.balance(accountId), GRANT);

  // Minutes later (the row is written, the marker cut to its last 10 minutes): a young task's settlement
  // skips the ledger read (settleAbsentAt) and the marker alone answers.
  await drainAll();
  t.true((await gw.deps.redis.ttl(accountRedisKeys.op(accountId, `${task._id}:settle`))) <= MARKER_AFTER_ROW_S, 'the drain cut the marker once the row was written');
  await otherWorker().acts.settleMediaTask(input);
  t.is(await gw.deps.wallet.balance(accountId), GRANT);

  // Much later (every worker down for a day): the row is written and the marker is gone; the ledger answers.
  await gw.deps.redis.del(accountRedisKeys.op(accountId, `${task._id}:settle`), accountRedisKeys.op(accountId, `${task._id}:reserve`));
  await gw.deps.db.Task.updateOne({ _id: task._id }, { $set: { created_at: new Date(Date.now() - 24 * 3600_000) } });
  const third = otherWorker();
  await third.acts.settleMediaTask({ taskId: task._id, outcome: input.outcome }); // an older history: no facts, the task is read
  await third.acts.settleMediaTask({ ...input, task: { ...input.task!, created_at: Date.now() - 24 * 3600_000 } }); // facts of an old task
  // And the hold, retried by an orphan sweep elsewhere, is a duplicate too.
  const hold = await third.wallet.applyMarkedAhead(
    { opId: `${task._id}:reserve`, accountId, keyId, kind: 'reserve', amountNano: -PRICE, keySpendNano: PRICE, ref: task._id },
    { gate: { capNano: null } },
  );
  t.is(hold.status, 'duplicate');

  const m = await moneyOf(accountId, keyId, task._id);
  t.is(m.balance, GRANT);
  t.is(m.ledger, GRANT);
  t.is(m.spend, 0);
  t.deepEqual(m.rows, [`${task._id}:reserve=${-PRICE}`, `${task._id}:settle=${PRICE}`].sort());
});

test.serial('two workers settling the same task at once: one applies, both report the same cost', async (t) => {
  const { accountId, keyId, task } = await submit();
  const input: SettleInput = { taskId: task._id, outcome: succeeded, task: factsOf(task) };
  const [a, b] = [otherWorker(), otherWorker()];
  const costs = await Promise.all([a.acts.settleMediaTask(input), b.acts.settleMediaTask(input), a.acts.settleMediaTask(input)]);
  t.deepEqual(costs, Array(3).fill({ costNano: PRICE, state: 'succeeded' }));
  const m = await moneyOf(accountId, keyId, task._id);
  await gw.flushRows();
  t.is(m.balance, GRANT - PRICE);
  t.is(m.ledger, GRANT - PRICE);
  t.is(m.spend, PRICE);
  t.deepEqual(m.rows, [`${task._id}:reserve=${-PRICE}`, `${task._id}:settle=0`].sort());
  const usage = await gw.deps.db.Usage.findById(task._id).lean<{ status: string; cost_nano: number }>();
  t.is(usage?.status, 'success');
  t.is(usage?.cost_nano, PRICE);
  t.is((await gw.deps.db.Task.findById(task._id).lean<TaskDocument>())!.state, 'succeeded');
});

test.serial('a crowd of workers settling one task at once: none throws, one applies, all report the same cost, one final usage row', async (t) => {
  const { accountId, keyId, task } = await submit();
  const input: SettleInput = { taskId: task._id, outcome: succeeded, task: factsOf(task) };
  // Twelve settlements on eight worker processes' wallets, all started together: the wallet op, the
  // usage row's upsert (racing each other and the journal drain's in-flight row) and the task's patch.
  const crowd = Array.from({ length: 8 }, () => otherWorker());
  const runs = Array.from({ length: 12 }, (_, i) => crowd[i % crowd.length].acts.settleMediaTask(input));
  const outcomes = await Promise.allSettled(runs);
  t.deepEqual(outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason)), [], 'no settlement threw');
  t.deepEqual(outcomes.map((o) => (o as PromiseFulfilledResult<{ costNano: number }>).value), Array(12).fill({ costNano: PRICE, state: 'succeeded' }));
  const m = await moneyOf(accountId, keyId, task._id);
  t.is(m.balance, GRANT - PRICE);
  t.is(m.ledger, GRANT - PRICE);
  t.is(m.spend, PRICE);
  t.deepEqual(m.rows, [`${task._id}:reserve=${-PRICE}`, `${task._id}:settle=0`].sort(), 'the settlement applied once');
  await gw.flushRows();
  const usage = await gw.deps.db.Usage.find({ _id: task._id }).lean<Array<{ status: string; cost_nano: number }>>();
  t.is(usage.length, 1);
  t.like(usage[0], { status: 'success', cost_nano: PRICE });
  t.like((await gw.deps.db.Task.findById(task._id).lean<TaskDocument>())!, { state: 'succeeded', cost_nano: PRICE });
});

test.serial('a later settlement with another outcome (a cancel after a lost workflow task) applies the first one\'s: one outcome for wallet, usage row and task', async (t) => {
  const { accountId, keyId, task } = await submit();
  const first = otherWorker();
  t.deepEqual(await first.acts.settleMediaTask({ taskId: task._id, outcome: succeeded, task: factsOf(task) }), { costNano: PRICE, state: 'succeeded' });
  const cancelled: ProviderOutcome = { state: 'cancelled', units: 0, urls: [], expiresAt: null, errorCode: 'task_cancelled', errorMessage: 'the task was cancelled', clientStatus: 499 };
  // The workflow ran again from the start, saw the cancel first and settles "cancelled" on another worker.
  t.deepEqual(await otherWorker().acts.settleMediaTask({ taskId: task._id, outcome: cancelled, task: factsOf(task), progress: null }), { costNano: PRICE, state: 'succeeded' });
  const m = await moneyOf(accountId, keyId, task._id);
  t.is(m.balance, GRANT - PRICE);
  t.is(m.ledger, GRANT - PRICE);
  t.is(m.spend, PRICE);
  await gw.flushRows();
  t.like((await gw.deps.db.Usage.findById(task._id).lean<{ status: string; cost_nano: number }>())!, { status: 'success', cost_nano: PRICE });
  t.like((await gw.deps.db.Task.findById(task._id).lean<TaskDocument>())!, { state: 'succeeded', cost_nano: PRICE, error_code: null, result: { urls: succeeded.urls } });

  // The other order: the cancel settled first, a late "succeeded" (a poll's outcome replayed) refunds in full all the same.
  const other = await submit();
  await otherWorker().acts.settleMediaTask({ taskId: other.task._id, outcome: cancelled, task: factsOf(other.task) });
  t.deepEqual(await otherWorker().acts.settleMediaTask({ taskId: other.task._id, outcome: succeeded, task: factsOf(other.task) }), { costNano: 0, state: 'cancelled' });
  const m2 = await moneyOf(other.accountId, other.keyId, other.task._id);
  t.is(m2.balance, GRANT);
  t.is(m2.ledger, GRANT);
  t.like((await gw.deps.db.Task.findById(other.task._id).lean<TaskDocument>())!, { state: 'cancelled', cost_nano: 0, result: null });
});

test.serial('a hold written ahead survives a rebuild of the projection from the ledger (the drain writes its row first)', async (t) => {
  const { accountId, keyId, task } = await submit();
  await gw.deps.wallet.rebuild(accountId, [keyId]);
  t.is(await gw.deps.wallet.balance(accountId), GRANT - PRICE);
  t.is(await gw.deps.wallet.keySpend(keyId), PRICE);
  await otherWorker().acts.settleMediaTask({ taskId: task._id, outcome: succeeded, task: factsOf(task) });
  const m = await moneyOf(accountId, keyId, task._id);
  t.is(m.balance, GRANT - PRICE);
  t.is(m.ledger, GRANT - PRICE);
});

test('a settlement knows its op had no row at the task\'s creation: young tasks skip the ledger read, old ones do not', (t) => {
  const now = Date.now();
  const fresh = (createdAt: number) => performance.now() - settleAbsentAt(new Date(createdAt), now) < FRESH_OP_MS;
  t.true(fresh(now - 2_000));
  t.true(fresh(now + 5_000), 'a gateway clock ahead of this one counts as age 0');
  t.false(fresh(now - FRESH_OP_MS - 1_000));
  t.false(fresh(now - 24 * 3600_000));
});
