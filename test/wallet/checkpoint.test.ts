import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { CHECKPOINT_MARGIN_MS } from '../../capabilities/accounts/wallet';
import type { LedgerDoc } from '../../capabilities/accounts/store';
import { filtersByScan } from '../../platform/mongo';

/**
 * Item 7 of issue 13: a projection rebuild reads the wallet's last checkpoint
 * and the ledger rows recorded after it, so its cost follows recent activity,
 * not the wallet's age; and it is exact (compared with a full ledger sum).
 */
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway();
});
test.after.always(async () => gw?.close());

const HISTORY = 100_000;

test('a rebuild after 100,000 ops reads only the rows after the checkpoint, and is exact', async (t) => {
  t.timeout(15 * 60_000);
  const a = await gw.newAccount();
  const k1 = await gw.newKey(a.id);
  const k2 = await gw.newKey(a.id);
  const keys = [k1.id, k2.id];

  // 100,000 ops of history, an hour old (bulk: the rows the drain and the wallet would have written).
  const old = new Date(Date.now() - 3600_000);
  let balance = 0;
  const spend = new Map<string, number>(keys.map((k) => [k, 0]));
  const chunk: LedgerDoc[] = [];
  for (let i = 0; i < HISTORY; i++) {
    const key = keys[i % 2];
    const topup = i % 997 === 0;
    const amount = topup ? 134_800_000_000 + i : 1 + ((i * 7919) % 90_000_000);
    const doc: LedgerDoc = topup
      ? { _id: `${a.id}:topup:h${i}`, account_id: a.id, key_id: null, kind: 'topup', amount_nano: amount, key_spend_nano: 0, ref: `h${i}`, created_at: old, recorded_at: old }
      : { _id: `h${i}:charge`, account_id: a.id, key_id: key, kind: 'charge', amount_nano: -amount, key_spend_nano: amount, ref: `h${i}`, created_at: old, recorded_at: old };
    balance += doc.amount_nano;
    if (doc.key_id) spend.set(doc.key_id, spend.get(doc.key_id)! + doc.key_spend_nano);
    chunk.push(doc);
    if (chunk.length === 10_000) await gw.deps.db.Ledger.collection.insertMany(chunk.splice(0) as never, { ordered: false });
  }

  const cp = await gw.deps.wallet.checkpoint(a.id);
  t.truthy(cp);
  t.is(cp!.rows, HISTORY, 'the signup grant, recorded just now, is after the cut');
  t.is(cp!.balance_nano, balance);
  // The rows went in behind the projection's back: load it from the checkpoint (plus the grant, recorded just now).
  await gw.deps.wallet.rebuild(a.id, keys);
  t.is(gw.deps.wallet.stats.lastLoadRows, 1);
  t.is(await gw.deps.wallet.balance(a.id), balance + 40_440_000_000);

  // Recent activity after the checkpoint, through the real paths: the grant, 40 charges written ahead, 10 holds.
  let recent = 1; // the grant
  for (let i = 0; i < 40; i++) {
    const amount = 1_000 + i;
    const ticket = gw.deps.wallet.ticket();
    await gw.deps.wallet.applyAhead({ opId: `r${i}:charge`, accountId: a.id, keyId: keys[i % 2], kind: 'charge', amountNano: -amount, keySpendNano: amount, ref: `r${i}` }, undefined, ticket);
    ticket.close();
    recent++;
  }
  for (let i = 0; i < 10; i++) {
    await gw.deps.wallet.apply({ opId: `t${i}:reserve`, accountId: a.id, keyId: k1.id, kind: 'reserve', amountNano: -5_000, keySpendNano: 5_000, ref: `t${i}` }, { capNano: null });
    recent++;
  }
  const before = await gw.deps.wallet.balance(a.id);
  const spendBefore = await Promise.all(keys.map((k) => gw.deps.wallet.keySpend(k)));
  t.is(before, balance + 40_440_000_000 - 40 * 1_000 - (39 * 40) / 2 - 10 * 5_000);
  t.is(spendBefore[1], spend.get(keys[1])! + 20 * 1_000 + (1 + 3 + 5 + 7 + 9 + 11 + 13 + 15 + 17 + 19 + 21 + 23 + 25 + 27 + 29 + 31 + 33 + 35 + 37 + 39));

  // Redis loses the projection: the rebuild reads the checkpoint plus the recent rows only.
  await gw.deps.wallet.rebuild(a.id, keys);
  t.is(gw.deps.wallet.stats.lastLoadRows, recent, 'only the rows after the checkpoint were read');
  t.is(await gw.deps.wallet.balance(a.id), before);
  t.deepEqual(await Promise.all(keys.map((k) => gw.deps.wallet.keySpend(k))), spendBefore);

  // Exact against the whole ledger summed row by row.
  const totals = await gw.deps.wallet.ledgerTotals(a.id);
  t.is(totals.rows, HISTORY + recent);
  t.is(totals.balanceNano, before);
  for (const [j, k] of keys.entries()) t.is(totals.keySpend.get(k), spendBefore[j]);

  // A later checkpoint folds the recent rows in (cut past them); the next rebuild reads nothing else.
  const next = await gw.deps.wallet.checkpoint(a.id, Date.now() + CHECKPOINT_MARGIN_MS + 1_000);
  t.is(next!.rows, HISTORY + recent);
  t.is(next!.balance_nano, before);
  await gw.deps.wallet.rebuild(a.id, keys);
  t.is(gw.deps.wallet.stats.lastLoadRows, 0);
  t.is(await gw.deps.wallet.balance(a.id), before);
  t.deepEqual(await Promise.all(keys.map((k) => gw.deps.wallet.keySpend(k))), spendBefore);

  // And the wallet keeps working on top of it.
  await gw.deps.wallet.apply({ opId: `${a.id}:adjust:after`, accountId: a.id, kind: 'adjust', amountNano: 7 });
  t.is(await gw.deps.wallet.balance(a.id), before + 7);
  t.is((await gw.deps.wallet.ledgerTotals(a.id)).balanceNano, before + 7);
});

test('a checkpoint never folds in rows recorded within the margin, and a repeated one changes nothing', async (t) => {
  const a = await gw.newAccount();
  const first = await gw.deps.wallet.checkpoint(a.id);
  t.is(first!.rows, 0, 'the grant was recorded just now: after the cut');
  t.is(first!.balance_nano, 0);
  const again = await gw.deps.wallet.checkpoint(a.id);
  t.is(again!.rows, 0);
  t.is(again!.balance_nano, 0);
  await gw.deps.wallet.rebuild(a.id, []);
  t.is(gw.deps.wallet.stats.lastLoadRows, 1);
  t.is(await gw.deps.wallet.balance(a.id), 40_440_000_000);
});

test('a load folds the next checkpoint into its own pass; on a scanning store written rows schedule none', async (t) => {
  t.timeout(5 * 60_000);
  const wallet = gw.deps.wallet;
  const scanning = filtersByScan(gw.deps.db.Ledger.db);
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  const old = new Date(Date.now() - 3600_000);
  const rows: LedgerDoc[] = Array.from({ length: 12_000 }, (_, i) => ({
    _id: `f${a.id}:${i}:charge`, account_id: a.id, key_id: k.id, kind: 'charge', amount_nano: -(1_000 + i), key_spend_nano: 1_000 + i, ref: `f${i}`, created_at: old, recorded_at: old,
  }));
  for (let i = 0; i < rows.length; i += 4_000) await gw.deps.db.Ledger.collection.insertMany(rows.slice(i, i + 4_000) as never, { ordered: false });
  const charged = rows.reduce((s, r) => s + r.key_spend_nano, 0);

  // The drain tells the wallet about rows it wrote: on the embedded store that schedules no checkpoint
  // (each would scan the whole ledger); on an indexed store the 10,000th row of a wallet does.
  const before = wallet.stats.checkpoints;
  wallet.journal.onRows!(rows);
  await new Promise((r) => setTimeout(r, 200));
  if (scanning) {
    t.is(wallet.stats.checkpoints, before, 'no checkpoint from written rows on a scanning store');
    t.is(await wallet.lastCheckpoint(a.id), null);
  }

  // A load reads the rows anyway, and writes the checkpoint from the same pass: the next load reads only the grant.
  await wallet.rebuild(a.id, [k.id]);
  t.is(wallet.stats.lastLoadRows, scanning ? 12_001 : 1);
  const cp = await wallet.lastCheckpoint(a.id);
  t.is(cp!.rows, 12_000, 'the grant, recorded just now, is after the cut');
  t.is(cp!.balance_nano, -charged);
  t.deepEqual(cp!.key_spend, [{ key_id: k.id, nano: charged }]);
  await wallet.rebuild(a.id, [k.id]);
  t.is(wallet.stats.lastLoadRows, 1);
  t.is(await wallet.balance(a.id), 40_440_000_000 - charged);
  t.is(await wallet.keySpend(k.id), charged);
});
