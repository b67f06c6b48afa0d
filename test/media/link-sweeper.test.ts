import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { createLogger } from '../../platform/logger';
import { ensureLinkSweeper, linkSweeperId } from '../../workers/worker';
import { linkSweeperWorkflow, LINK_SWEEPER_ID } from '../../workflows/link-sweeper';
import { taskQueueFor } from '../../domain/task-queues';
import { parseCredits } from '../../domain/money';
import { FINAL_STATES } from '../../domain/media/task';

/**
 * Two deployments on one Temporal namespace (as the suite's files are, or staging beside production): each
 * deployment's sweeper runs on its own queue and resumes its own store's orphaned tasks. With one sweeper
 * id for the namespace, the second deployment's start was refused and its orphans stayed queued.
 */

/** A task its gateway wrote (and held for) before dying, older than the orphan threshold. */
async function orphanIn(gw: TestGateway, accountId: string, name: string): Promise<string> {
  const id = `task_${Math.random().toString(16).slice(2, 10)}_${name}`;
  const price = parseCredits('0.04');
  await gw.deps.db.Task.create({
    _id: id, account_id: accountId, key_id: 'key_x', key_name: 'k', key_prefix: 'sk-mgateway-', kind: 'image', endpoint: 'generations',
    model: 'gpt-image-1', state: 'queued', progress: null, input: { model: 'gpt-image-1', prompt: 'orphan', n: 1 },
    quote: { unitType: 'image', unitNano: price, fixedNano: 0, reservedUnits: 1 }, reserved_nano: price, cost_nano: 0,
    unit_count: 0, upstream: null, result: null, final_body: null, final_status: null, error_code: null, error_message: null,
    request_id: `req_${name}`, created_at: new Date(Date.now() - 150_000), started_at: null, completed_at: null, updated_at: new Date(),
  });
  await gw.deps.wallet.apply({ opId: `${id}:reserve`, accountId, keyId: 'key_x', kind: 'reserve', amountNano: -price, keySpendNano: price, ref: id }, { capNano: null });
  return id;
}

/** The task's state once final (its workflow starts only when a sweeper resumes it), or the last seen at the deadline. */
async function finalState(gw: TestGateway, id: string, withinMs: number): Promise<string | undefined> {
  const until = Date.now() + withinMs;
  for (;;) {
    const state = (await gw.deps.db.Task.findById(id).lean())?.state;
    if ((state && FINAL_STATES.has(state as never)) || Date.now() > until) return state;
    await new Promise((r) => setTimeout(r, 250));
  }
}

test('each deployment sweeps its own orphaned tasks; a sweeper under the shared id on its queue is replaced', async (t) => {
  t.timeout(120_000);
  const log = createLogger('silent');
  const [a, b] = [await startGateway({}, { simulator: true, worker: true }), await startGateway({}, { simulator: true, worker: true })];
  const client = a.deps.temporal;
  const started: string[] = [];
  try {
    // B once ran a sweeper under the id all deployments shared: it is replaced by B's own.
    const legacy = await client.workflow.start(linkSweeperWorkflow, {
      taskQueue: taskQueueFor(b.config.TEMPORAL_TASK_QUEUE, 'linkSweeperWorkflow'), workflowId: LINK_SWEEPER_ID,
      args: [{ intervalMs: 60_000 }], workflowIdConflictPolicy: 'USE_EXISTING',
    });
    const legacyWasB = (await legacy.describe()).taskQueue === taskQueueFor(b.config.TEMPORAL_TASK_QUEUE, 'linkSweeperWorkflow');
    const [accountA, accountB] = [await a.newAccount(), await b.newAccount()];
    const [orphanA, orphanB] = [await orphanIn(a, accountA.id, 'a'), await orphanIn(b, accountB.id, 'b')];
    // A's deployment starts first, then B's: both sweepers run, each on its own queue, and a second start is a no-op.
    for (const gw of [a, b, b]) {
      await ensureLinkSweeper(client, gw.config.TEMPORAL_TASK_QUEUE, log);
      started.push(linkSweeperId(gw.config.TEMPORAL_TASK_QUEUE));
    }
    for (const gw of [a, b]) {
      const d = await client.workflow.getHandle(linkSweeperId(gw.config.TEMPORAL_TASK_QUEUE)).describe();
      t.is(d.status.name, 'RUNNING');
      t.is(d.taskQueue, taskQueueFor(gw.config.TEMPORAL_TASK_QUEUE, 'linkSweeperWorkflow'));
    }
    if (legacyWasB) t.is((await legacy.describe()).status.name, 'TERMINATED');
    // Each sweeper's first round resumes its own deployment's orphan: one hold, one settlement.
    for (const [gw, id, account] of [[a, orphanA, accountA], [b, orphanB, accountB]] as const) {
      t.is(await finalState(gw, id, 60_000), 'succeeded', `${id} resumed by its deployment's sweeper`);
      await gw.deps.wallet.journal.flush();
      t.deepEqual((await gw.deps.db.Ledger.find({ ref: id }).lean()).map((o) => o._id).sort(), [`${id}:reserve`, `${id}:settle`]);
      t.is(await gw.deps.wallet.balance(account.id), parseCredits('40.44') - parseCredits('0.04'));
    }
  } finally {
    for (const id of started) await client.workflow.getHandle(id).terminate('test over').catch(() => undefined);
    await Promise.all([a.close(), b.close()]);
  }
});
