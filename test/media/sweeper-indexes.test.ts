import { MockActivityEnvironment } from '@temporalio/testing';
import test from 'ava';
import { startGateway } from '../helpers/stack';
import { captureQueries, unservedQueries } from '../helpers/indexes';
import { createMediaActivities } from '../../activities/media';
import { createLogger } from '../../platform/logger';

/**
 * The deployment's sweeper (workflows/link-sweeper.ts) queries the tasks and their stored files every
 * minute, for ever: each of its filters must be served by a declared index (MongoDB would otherwise scan
 * every task ever submitted, and every stored file's bytes). The embedded store filters by scan and builds
 * no secondary index (platform/mongo.ts), so the check is on the filters the sweeper really sends,
 * captured from mongoose, against the models' declared indexes.
 */
test('every query of the sweeper\'s rounds has an index that serves it', async (t) => {
  const gw = await startGateway();
  t.teardown(() => gw.close());
  const activities = createMediaActivities({ ...gw.deps, log: createLogger('error') } as never);
  const sent = await captureQueries(async () => {
    await new MockActivityEnvironment().run(activities.resumeOrphanTasks, { now: Date.now() });
    await new MockActivityEnvironment().run(activities.sweepExpiredLinks, { now: Date.now() });
  });
  t.true(sent.filter((q) => q.collection === 'tasks' || q.collection === 'task_files').length >= 4, JSON.stringify(sent));
  t.deepEqual(unservedQueries(sent, [gw.deps.db.Task, gw.deps.db.TaskFile]), []);
});
