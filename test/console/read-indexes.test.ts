import test from 'ava';
import { startGateway } from '../helpers/stack';
import { captureQueries, unservedQueries } from '../helpers/indexes';
import { consoleServices } from '../../gateway/console/services';
import { auditModel } from '../../capabilities/accounts/store';

/**
 * Reads the console makes on every page or on a person's request, on collections that grow without
 * bound: each filter must have an index that serves it on MongoDB (the embedded store scans whatever
 * the indexes, so the check is on the filters sent, against the declared indexes). The operator's
 * account list runs on every page an operator opens; a key's history on its page; the call lookup by
 * request id or task id reads by primary key (it used to filter the usage rows by request id).
 */
test('the console\'s account list, key history and call lookup have indexes that serve them', async (t) => {
  const gw = await startGateway();
  t.teardown(() => gw.close());
  const svc = consoleServices(gw.deps);
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  const sent = await captureQueries(async () => {
    await svc.access.managed({ kind: 'operator' });
    await svc.audit.forTarget(k.id, 20);
    await svc.audit.forAccount(a.id);
    for (const scope of [null, [a.id], [a.id, 'acct_other']]) await svc.callLog.row('req_unknown', scope);
  });
  t.true(sent.length >= 8, JSON.stringify(sent));
  const d = gw.deps.db;
  t.deepEqual(unservedQueries(sent, [d.Account, d.Usage, d.Task, auditModel(d.conn)]), []);
});
