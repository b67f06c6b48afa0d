import test from 'ava';
import mongoose from 'mongoose';
import { startGateway } from '../helpers/stack';
import { createMediaActivities } from '../../activities/media';
import { createLogger } from '../../platform/logger';

/**
 * The deployment's sweeper (workflows/link-sweeper.ts) queries the tasks and their stored files every
 * minute, for ever: each of its filters must be served by a declared index (MongoDB would otherwise scan
 * every task ever submitted, and every stored file's bytes). The embedded store filters by scan and builds
 * no secondary index (platform/mongo.ts), so the check is on the filters the sweeper really sends, captured
 * from mongoose, against the models' declared indexes: some index's leading keys are all fields of the
 * filter, its first one at least.
 */
test('every query of the sweeper\'s rounds has an index that serves it', async (t) => {
  const gw = await startGateway();
  t.teardown(() => gw.close());
  const seen: Array<{ collection: string; method: string; filter: Record<string, unknown> }> = [];
  mongoose.set('debug', (collection: string, method: string, filter: unknown) => {
    if (filter && typeof filter === 'object') seen.push({ collection, method, filter: filter as Record<string, unknown> });
  });
  t.teardown(() => void mongoose.set('debug', false));
  const activities = createMediaActivities({ ...gw.deps, log: createLogger('error') } as never);
  await activities.resumeOrphanTasks({ now: Date.now() });
  await activities.sweepExpiredLinks({ now: Date.now() });
  mongoose.set('debug', false);

  const indexesOf: Record<string, Array<string[]>> = {
    tasks: gw.deps.db.Task.schema.indexes().map(([fields]) => Object.keys(fields)),
    task_files: gw.deps.db.TaskFile.schema.indexes().map(([fields]) => Object.keys(fields)),
  };
  const queries = seen.filter((q) => q.collection in indexesOf && ['find', 'updateMany', 'deleteMany', 'countDocuments'].includes(q.method));
  t.true(queries.length >= 4, `the sweep's queries were seen: ${JSON.stringify(seen.map((q) => `${q.collection}.${q.method}`))}`);
  for (const q of queries) {
    const fields = new Set(Object.keys(q.filter));
    const served = indexesOf[q.collection].some((keys) => keys.length > 0 && keys.every((k) => fields.has(k)));
    t.true(served, `${q.collection}.${q.method}(${JSON.stringify(q.filter)}) has no index among ${JSON.stringify(indexesOf[q.collection])}`);
  }
});
