import test from 'ava';
import { accountRedisKeys } from '../../capabilities/accounts/store';
import { startGateway, type TestGateway } from '../helpers/stack';
import { MARKER_AFTER_ROW_S } from '../../capabilities/accounts/ledger-journal';
import type { LedgerOp } from '../../capabilities/accounts/wallet';
import type { UsageDoc } from '../../capabilities/usage/store';

/**
 * Item 6 of issue 13: deduplication stays exact within every retry window
 * while Redis keeps no per-op state for long (docs/wallet.md lists the windows).
 * Serial: the sequence window's floor is the writer's oldest open ticket, which
 * another test's charges in flight would hold back.
 */
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway();
});
test.after.always(async () => gw?.close());

const charge = (acct: string, key: string, n: number | string, amount = 1_000): LedgerOp => ({
  opId: `req_${acct}_${n}:charge`, accountId: acct, keyId: key, kind: 'charge', amountNano: -amount, keySpendNano: amount, ref: `req_${acct}_${n}`,
});

test.serial('a chat charge retried with its ticket applies once; 1,000 charges leave a window of one or two numbers and no marker', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  const start = await gw.deps.wallet.balance(a.id);
  const ticket = gw.deps.wallet.ticket();
  const op = charge(a.id, k.id, 'retried', 5_000);
  t.is((await gw.deps.wallet.applyAhead(op, undefined, ticket)).status, 'applied');
  // The reply was "lost": the gateway sends the same charge again, and again concurrently.
  const again = await Promise.all([0, 1, 2].map(() => gw.deps.wallet.applyAhead(op, undefined, ticket)));
  t.deepEqual(again.map((r) => r.status), ['duplicate', 'duplicate', 'duplicate']);
  ticket.close();
  // Even once its ticket is closed, the old number stays settled (below the floor).
  t.is((await gw.deps.wallet.applyAhead(op, undefined, ticket)).status, 'duplicate');
  for (let i = 0; i < 1_000; i++) {
    const tk = gw.deps.wallet.ticket();
    await gw.deps.wallet.applyAhead(charge(a.id, k.id, i), undefined, tk);
    tk.close();
  }
  t.is(await gw.deps.wallet.balance(a.id), start - 5_000 - 1_000 * 1_000);
  const window = accountRedisKeys.chatSeq(a.id, gw.deps.wallet.writer);
  t.true((await gw.deps.redis.hlen(window)) <= 2, 'the window holds the floor and at most the last number');
  const ttl = await gw.deps.redis.pttl(window);
  t.true(ttl > 0 && ttl <= 15 * 60_000, 'and expires once the writer is gone');
  t.is(await gw.deps.redis.exists(accountRedisKeys.op(a.id, op.opId)), 0, 'no per-op marker for chat charges');
  await gw.deps.wallet.journal.flush();
  t.is((await gw.deps.wallet.ledgerTotals(a.id)).balanceNano, start - 5_000 - 1_000 * 1_000);
});

test.serial('concurrent charges of one writer keep the window small and each applies once', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  const start = await gw.deps.wallet.balance(a.id);
  const results = await Promise.all(Array.from({ length: 200 }, async (_, i) => {
    const tk = gw.deps.wallet.ticket();
    try {
      const op = charge(a.id, k.id, i);
      const [r1, r2] = await Promise.all([gw.deps.wallet.applyAhead(op, undefined, tk), gw.deps.wallet.applyAhead(op, undefined, tk)]);
      return [r1.status, r2.status].sort().join(',');
    } finally {
      tk.close();
    }
  }));
  t.true(results.every((r) => r === 'applied,duplicate'));
  t.is(await gw.deps.wallet.balance(a.id), start - 200 * 1_000);
  const last = gw.deps.wallet.ticket();
  await gw.deps.wallet.applyAhead(charge(a.id, k.id, 'last'), undefined, last);
  last.close();
  t.true((await gw.deps.redis.hlen(accountRedisKeys.chatSeq(a.id, gw.deps.wallet.writer))) <= 2, 'once nothing is in flight the window collapses');
});

test.serial('the Redis-outage fallback: a charge written straight to the ledger, the projection rebuilt meanwhile, then projected with its ticket: counted once', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  const start = await gw.deps.wallet.balance(a.id);
  const op = charge(a.id, k.id, 'direct', 7_777);
  const ticket = gw.deps.wallet.ticket();
  const usage = { _id: op.ref, account_id: a.id, key_id: k.id, created_at: new Date() } as unknown as UsageDoc;
  await gw.deps.wallet.recordDirect(op, usage, ticket);
  // Redis lost the projection while the charge waited: the rebuild counts the row...
  await gw.deps.wallet.rebuild(a.id, [k.id]);
  t.is(await gw.deps.wallet.balance(a.id), start - 7_777);
  // ...and the gateway's projection step, when Redis answers again, is then a duplicate.
  t.is((await gw.deps.wallet.apply(op, undefined, ticket)).status, 'duplicate');
  ticket.close();
  t.is(await gw.deps.wallet.balance(a.id), start - 7_777);
  t.is(await gw.deps.wallet.keySpend(k.id), 7_777);
});

test.serial('other ops: the marker outlives the ledger row by the margin only, and a retry after it is gone is still a duplicate', async (t) => {
  const a = await gw.newAccount();
  const op: LedgerOp = { opId: `task_${a.id}:reserve`, accountId: a.id, kind: 'reserve', amountNano: -3_000 };
  t.is((await gw.deps.wallet.apply(op, { capNano: null })).status, 'applied');
  const ttl = await gw.deps.redis.ttl(accountRedisKeys.op(a.id, op.opId));
  t.true(ttl > 0 && ttl <= MARKER_AFTER_ROW_S, `marker ttl ${ttl}`);
  const left = (await gw.deps.redis.xrange(accountRedisKeys.journalOf(a.id), '-', '+')).filter(([, f]) => f.some((v) => v.includes(op.opId)));
  t.is(left.length, 0, 'the row is written, so its journal entry is gone');
  // The marker expired (an activity retried an hour later): the ledger answers.
  await gw.deps.redis.del(accountRedisKeys.op(a.id, op.opId));
  const retry = await gw.deps.wallet.apply(op, { capNano: null });
  t.is(retry.status, 'duplicate');
  t.is(retry.balanceNano, 40_440_000_000 - 3_000);
  t.is(await gw.deps.wallet.balance(a.id), 40_440_000_000 - 3_000);
});

test.serial('an op whose row is not written yet (its caller died after the script) is a duplicate through its marker, and the drain writes the row', async (t) => {
  const a = await gw.newAccount();
  const op: LedgerOp = { opId: `task_${a.id}:settle`, accountId: a.id, kind: 'settle', amountNano: 2_000 };
  // The caller's script ran (projection moved, entry written ahead) and the process died before its insert.
  const entry = gw.deps.wallet.journal.entry({ l: { _id: op.opId, account_id: a.id, key_id: null, kind: 'settle', amount_nano: 2_000, key_spend_nano: 0, ref: null, created_at: new Date() } });
  const [status] = await gw.deps.redis.walletApply(
    accountRedisKeys.balance(a.id), accountRedisKeys.keySpend(a.id, '-'), accountRedisKeys.op(a.id, op.opId), accountRedisKeys.journalOf(a.id), accountRedisKeys.none(a.id),
    2_000, 0, 0, -1, 'm', 24 * 3600, 0, 1, entry, '1', '',
  );
  t.is(status, 1);
  t.true((await gw.deps.redis.ttl(accountRedisKeys.op(a.id, op.opId))) > MARKER_AFTER_ROW_S, 'the marker holds while the row is missing');
  // The activity retries: no row yet, the marker answers.
  const retry = await gw.deps.wallet.apply(op);
  t.is(retry.status, 'duplicate');
  await gw.deps.wallet.journal.flush();
  t.truthy(await gw.deps.db.Ledger.exists({ _id: op.opId }), 'the drain wrote the row');
  t.is(await gw.deps.wallet.balance(a.id), 40_440_000_000 + 2_000);
  t.is((await gw.deps.wallet.ledgerTotals(a.id)).balanceNano, 40_440_000_000 + 2_000);
  const ttl = await gw.deps.redis.ttl(accountRedisKeys.op(a.id, op.opId));
  t.true(ttl > 0 && ttl <= MARKER_AFTER_ROW_S, 'the drain shortened the marker once the row was written');
});

test.serial('every key a wallet script touches shares one hash slot', async (t) => {
  const { default: slot } = await import('cluster-key-slot');
  const prefix = gw.config.REDIS_PREFIX;
  for (const acct of ['acct_a', 'acct_b1', 'acct_zz9']) {
    const keys = [accountRedisKeys.balance(acct), accountRedisKeys.keySpend(acct, 'key_1'), accountRedisKeys.op(acct, 'x:charge'), accountRedisKeys.chatSeq(acct, 'w1'), accountRedisKeys.journalOf(acct),
      accountRedisKeys.account(acct), accountRedisKeys.keyRecord(acct, 'key_1'), accountRedisKeys.rateWindow(acct), accountRedisKeys.rateLeases(acct), accountRedisKeys.none(acct)];
    const slots = new Set(keys.map((k) => slot(prefix + k)));
    t.is(slots.size, 1, `${acct}: ${keys.join(' ')}`);
  }
});

test.serial('the journal carries dates as epoch milliseconds, and the drain writes them back as dates (entries from before, ISO strings, too)', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  const at = new Date('2026-11-28T07:00:00.123Z');
  const op = charge(a.id, k.id, 'dated', 7_000);
  const row = { _id: op.ref!, request_id: op.ref!, account_id: a.id, key_id: k.id, endpoint: 'chat.completions', status: 'success', cost_nano: 7_000, created_at: at } as const;
  const entry = JSON.parse(gw.deps.wallet.journal.entry({ l: { _id: op.opId, account_id: a.id, key_id: k.id, kind: 'charge', amount_nano: -7_000, key_spend_nano: 7_000, ref: op.ref!, created_at: at }, u: row }));
  t.is(entry.l.created_at, at.getTime());
  t.is(entry.u.created_at, at.getTime());
  t.is(row.created_at, at, 'the caller\'s row is left as it was (its Date, the same object)');
  const ticket = gw.deps.wallet.ticket();
  t.is((await gw.deps.wallet.applyAhead(op, row, ticket)).status, 'applied');
  ticket.close();
  // An entry as an older gateway wrote it (dates as ISO strings), left in the journal across an upgrade.
  const oldRef = `req_${a.id}_old`;
  await gw.deps.redis.xadd(accountRedisKeys.journalOf(a.id), '*', 'e', JSON.stringify({ u: { ...row, _id: oldRef, request_id: oldRef, created_at: at.toISOString() } }));
  gw.deps.wallet.journal.kick(a.id);
  await gw.deps.wallet.journal.flush();
  const ledger = await gw.deps.db.Ledger.findById(op.opId).lean();
  t.true(ledger!.created_at instanceof Date);
  t.true(Math.abs(ledger!.created_at.getTime() - Date.now()) < 60_000, 'the ledger row keeps the time the charge was made');
  for (const id of [op.ref!, oldRef]) {
    const u = await gw.deps.db.Usage.findById(id).lean<UsageDoc>();
    t.true(u!.created_at instanceof Date, id);
    t.is(u!.created_at.getTime(), at.getTime(), id);
  }
  // And a date query finds them (stored as dates, not numbers).
  t.is(await gw.deps.db.Usage.countDocuments({ account_id: a.id, created_at: { $gte: new Date(at.getTime() - 1), $lte: new Date(at.getTime() + 1) } }), 2);
});
