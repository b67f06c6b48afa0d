import test from 'ava';
import { randomBytes } from 'node:crypto';
import mongoose from 'mongoose';

/**
 * The embedded store's writes that read first (FerretDB's `update` and
 * `findAndModify`) never hold the store's connections while they write
 * (dev/scripts/lib/tools.ts, FERRETDB_PATCH p2). Unpatched, one `bulkWrite`
 * of 100 `updateOne`s (a knowledge base's relink writes that many) took all
 * of FerretDB's 100 SQLite connections and waited for a 101st: every client
 * of the store hung from then on. Each step here is bounded, so a store that
 * stops fails the test instead of hanging the suite.
 */

const STEP_MS = 60_000;

async function bounded<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer from the store in ${STEP_MS / 1000} s (its connections held by reads that wait on writes?)`)), STEP_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function storeUrl(): URL {
  const mongo = process.env.MONGO_URL;
  if (!mongo) throw new Error('MONGO_URL is not set: run the suite with `npm test`, which starts the services');
  const url = new URL(mongo);
  url.pathname = `/t_fw_${randomBytes(4).toString('hex')}`;
  return url;
}

const client = new mongoose.mongo.MongoClient(storeUrl().toString(), { maxPoolSize: 400 });
const db = client.db();

test.after.always(async () => {
  await db.dropDatabase().catch(() => undefined);
  await client.close();
});

const N = 300;
const seed = (name: string) => db.collection<{ _id: string; n: number; tag?: string }>(name);

async function seeded(name: string) {
  const c = seed(name);
  await c.insertMany(Array.from({ length: N }, (_, i) => ({ _id: `d${String(i).padStart(4, '0')}`, n: i })));
  return c;
}

test('one update command of 300 statements completes, each statement applied once', async (t) => {
  const c = await seeded('bulk');
  const ops = Array.from({ length: N }, (_, i) => ({ updateOne: { filter: { _id: `d${String(i).padStart(4, '0')}` }, update: { $set: { tag: `t${i}` }, $inc: { n: 1000 } } } }));
  const res = await bounded('bulkWrite of 300 updateOne', c.bulkWrite(ops, { ordered: false }));
  t.is(res.matchedCount, N);
  t.is(res.modifiedCount, N);
  const docs = await bounded('read back', c.find().sort({ _id: 1 }).toArray());
  t.deepEqual(docs.map((d) => [d.n, d.tag]), Array.from({ length: N }, (_, i) => [i + 1000, `t${i}`]));

  // Upserts and a multi-document statement in the same command.
  const mixed = await bounded('bulkWrite with upserts and updateMany', c.bulkWrite([
    ...Array.from({ length: 150 }, (_, i) => ({ updateOne: { filter: { _id: `new${i}` }, update: { $set: { n: -i } }, upsert: true } })),
    { updateMany: { filter: { n: { $gte: 1000 } }, update: { $set: { tag: 'many' } } } },
  ], { ordered: true }));
  t.is(mixed.upsertedCount, 150);
  t.is(mixed.modifiedCount, N);
  t.is(await c.countDocuments({ tag: 'many' }), N);
  t.is(await c.countDocuments({ _id: /^new/ }), 150);
});

test('many concurrent single updates and findAndModify calls complete', async (t) => {
  const c = await seeded('concurrent');
  const ids = Array.from({ length: N }, (_, i) => `d${String(i).padStart(4, '0')}`);
  const results = await bounded('300 concurrent updateOne and findOneAndUpdate', Promise.all(ids.map((id, i) =>
    i % 2 === 0
      ? c.updateOne({ _id: id }, { $inc: { n: 1 } }).then((r) => r.modifiedCount)
      : c.findOneAndUpdate({ _id: id }, { $inc: { n: 1 } }, { returnDocument: 'after' }).then((d) => (d?.n === i + 1 ? 1 : 0)),
  )));
  t.is(results.reduce((a, b) => a + b, 0), N);
  const sum = (await c.find().toArray()).reduce((a, d) => a + d.n, 0);
  t.is(sum, (N * (N - 1)) / 2 + N);

  // findAndModify with a sort still picks the first match, and remove still deletes it.
  const top = await bounded('findOneAndUpdate with sort', c.findOneAndUpdate({ n: { $gte: 10 } }, { $set: { tag: 'top' } }, { sort: { n: -1 }, returnDocument: 'after' }));
  t.is(top?._id, ids[N - 1]);
  t.is(top?.tag, 'top');
  const gone = await bounded('findOneAndDelete', c.findOneAndDelete({ tag: 'top' }));
  t.is(gone?._id, ids[N - 1]);
  t.is(await c.countDocuments(), N - 1);
  const none = await c.findOneAndUpdate({ _id: 'absent' }, { $set: { n: 1 } });
  t.is(none, null);
});
