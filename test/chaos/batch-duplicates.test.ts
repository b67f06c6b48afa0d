import test from 'ava';
import { randomBytes } from 'node:crypto';
import { connectStore, type Db } from '../../capabilities/store';
import { BatchInserter, duplicatesOf, insertIgnoringDuplicates } from '../../platform/batch-insert';

/**
 * Journal drains and ledger batches write rows whose _id is their business
 * id: a row that exists already is a success. A batch with duplicates in it
 * must leave every row written once, report which ones this call wrote,
 * and (on a store that reports every row of an unordered batch, as MongoDB
 * and FerretDB v1.24 do) not send the batch a second time row by row: each of
 * those inserts takes the dev store's one write lock.
 */
let db: Db;
test.before(async () => {
  const url = new URL(process.env.MONGO_URL!);
  url.pathname = `/t_dups_${randomBytes(4).toString('hex')}`;
  db = await connectStore(url.toString());
});
test.after.always(async () => {
  await db?.conn.dropDatabase().catch(() => undefined);
  await db?.conn.close();
});

const row = (id: string, n: number) => ({ _id: id, n });

test('an unordered batch with duplicates reports every row: written or existing', async (t) => {
  const c = db.conn.collection<{ _id: string; n: number }>('dups_report');
  await c.insertMany([row('a2', 0), row('a5', 0)]);
  const docs = Array.from({ length: 8 }, (_, i) => row(`a${i}`, 1));
  const err = await c.insertMany(docs, { ordered: false }).then(() => null, (e: unknown) => e);
  t.truthy(err);
  const { dup, accounted } = duplicatesOf(err, docs.length);
  t.deepEqual([...dup].sort(), [2, 5]);
  t.true(accounted, 'the store reports the rows it wrote past the duplicates');
  t.is(await c.countDocuments({}), 8);
});

test('insertIgnoringDuplicates: every row once, the existing ones untouched', async (t) => {
  const c = db.conn.collection<{ _id: string; n: number }>('dups_ignore');
  await c.insertMany([row('b0', 0), row('b3', 0)]);
  await insertIgnoringDuplicates(c as never, Array.from({ length: 6 }, (_, i) => row(`b${i}`, 1)));
  const all = await c.find({}).sort({ _id: 1 }).toArray();
  t.deepEqual(all.map((d) => [d._id, d.n]), [['b0', 0], ['b1', 1], ['b2', 1], ['b3', 0], ['b4', 1], ['b5', 1]]);
});

test('BatchInserter: true for the rows it wrote, false for the ones that existed', async (t) => {
  const c = db.conn.collection<{ _id: string; n: number }>('dups_batch');
  await c.insertMany([row('c1', 0), row('c4', 0)]);
  const inserter = new BatchInserter(() => c as never);
  const results = await Promise.all(Array.from({ length: 6 }, (_, i) => inserter.insert(row(`c${i}`, 1))));
  t.deepEqual(results, [true, false, true, true, false, true]);
  t.is(await c.countDocuments({}), 6);
  t.is(await c.countDocuments({ n: 0 }), 2);
});
