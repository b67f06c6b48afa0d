import test from 'ava';
import { accountRedisKeys } from '../../capabilities/accounts/store';
import { Client, Connection } from '@temporalio/client';
import { startGateway, type TestGateway } from '../helpers/stack';
import { createWorker } from '../../workers/worker';
import { auditWalletWorkflow } from '../../workflows';

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway();
});
test.after.always(async () => gw?.close());

test('a real worker on the dev server runs a workflow whose activity writes to Mongo', async (t) => {
  if (!process.env.TEMPORAL_ADDRESS) return t.fail('TEMPORAL_ADDRESS not set: run with `npm test`');
  const a = await gw.newAccount();
  // Make the projection drift, as if Redis missed an op: the audit must see it and repair it.
  await gw.deps.redis.incrby(accountRedisKeys.balance(a.id), 5);
  const { worker, connection: wc } = await createWorker(gw.config, gw.deps);
  const connection = await Connection.connect({ address: gw.config.TEMPORAL_ADDRESS });
  const client = new Client({ connection, namespace: gw.config.TEMPORAL_NAMESPACE });
  const workflowId = `audit-${a.id}`;
  const result = await worker.runUntil(
    client.workflow.execute(auditWalletWorkflow, { taskQueue: gw.config.TEMPORAL_TASK_QUEUE, workflowId, args: [{ accountId: a.id, repair: true }] }),
  );
  t.is(result.driftNano, 5);
  t.true(result.repaired);
  const audit = await gw.deps.db.WalletAudit.findById(workflowId).lean();
  t.is(audit?.drift_nano, 5);
  t.is(await gw.deps.wallet.balance(a.id), 40_440_000_000);
  await connection.close();
  await wc.close();
});
