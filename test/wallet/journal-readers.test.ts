import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { LedgerJournal } from '../../capabilities/accounts/ledger-journal';
import type { LedgerDoc } from '../../capabilities/accounts/store';

/**
 * Every gateway and worker drains the ledger journal. A reader flushes before it reads rows, and
 * an entry another process read first may still be on its way to Mongo: the flush waits for it,
 * so the reader sees every row appended before its flush (a task settled by a worker, read by a
 * gateway right after the answer).
 */
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway();
});
test.after.always(async () => gw?.close());

/** Another process's journal whose ledger inserts take `ms` (a slow store, or just a batch in flight). */
function slowJournal(ms: number): { journal: LedgerJournal; inserting: Promise<void> } {
  const db = gw.deps.db;
  let started!: () => void;
  const inserting = new Promise<void>((resolve) => (started = resolve));
  const collection = db.Ledger.collection;
  const slow = new Proxy(collection, {
    get(target, prop, receiver) {
      if (prop !== 'insertMany') return Reflect.get(target, prop, receiver);
      return async (...args: unknown[]) => {
        started();
        await new Promise((r) => setTimeout(r, ms));
        return (collection.insertMany as (...a: unknown[]) => unknown).apply(collection, args);
      };
    },
  });
  const ledger = new Proxy(db.Ledger, { get: (target, prop, receiver) => (prop === 'collection' ? slow : Reflect.get(target, prop, receiver)) });
  return { journal: new LedgerJournal({ ...db, Ledger: ledger } as never, gw.deps.redis), inserting };
}

test('a flush waits for the rows another process is writing: the reader sees them', async (t) => {
  const a = await gw.newAccount();
  // The scene needs the other process to be the one that read the entry. Every gateway and worker on this
  // Redis drains in the background, and one of them may take the entry first (then the other's insert never
  // starts): the scene is set again with a fresh entry, up to five times, instead of waiting forever.
  for (let attempt = 1; attempt <= 5; attempt++) {
    const row: LedgerDoc = { _id: `req_readers_${a.id}_${attempt}:charge`, account_id: a.id, key_id: null, kind: 'charge', amount_nano: -1_000, key_spend_nano: 0, ref: null, created_at: new Date() };
    const other = slowJournal(400);
    await other.journal.append({ l: row }, a.id);
    const theirs = other.journal.flush();
    const theyRead = await Promise.race([other.inserting.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 3_000))]);
    if (!theyRead) {
      await theirs;
      await other.journal.stop();
      t.log(`attempt ${attempt}: another drainer took the entry first; setting the scene again`);
      continue;
    }
    // The other process has read the entry; its insert is in flight.
    const started = Date.now();
    await gw.deps.wallet.journal.flush();
    const waited = Date.now() - started;
    const found = await gw.deps.db.Ledger.findById(row._id).lean<LedgerDoc>();
    t.is(found?.amount_nano, -1_000, `the row is there once the flush returns (it waited ${waited} ms)`);
    t.true(waited < 1_500, 'bounded');
    await theirs;
    await other.journal.stop();
    return;
  }
  t.fail('in five attempts another drainer always read the entry before the process under test');
});
