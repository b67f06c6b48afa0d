import test from 'ava';
import { accountRedisKeys } from '../../capabilities/accounts/store';
import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway();
});
test.after.always(async () => gw?.close());

async function ledgerSum(accountId: string) {
  const rows = await gw.deps.db.Ledger.find({ account_id: accountId }).lean();
  return { sum: rows.reduce((s, r) => s + r.amount_nano, 0), rows };
}

test('signup grant 40.44 is one ledger entry and the balance', async (t) => {
  const a = await gw.newAccount();
  t.is(a.balance_usd, '40.44');
  const { rows } = await ledgerSum(a.id);
  t.is(rows.length, 1);
  t.is(rows[0]._id, `${a.id}:grant`);
  t.is(rows[0].amount_nano, parseCredits('40.44'));
});

test('top-up minimum 134.8: below is 400, at minimum adds; same reference is applied once', async (t) => {
  const a = await gw.newAccount();
  const low = await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: '134.79' });
  t.is(low.status, 400);
  t.is(low.body.error.code, 'invalid_request');
  const ok = await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: 134.8, reference: 'pay_1' });
  t.is(ok.status, 201);
  t.is(ok.body.balance_usd, '175.24');
  const again = await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: 134.8, reference: 'pay_1' });
  t.true(again.body.replayed);
  t.is(again.body.balance_usd, '175.24');
});

test('an operator reference is applied once for its amount: another amount is 409, a checkout id is refused', async (t) => {
  const a = await gw.newAccount();
  t.is((await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: 135, reference: 'goodwill-1' })).status, 201);
  const other = await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: 900, reference: 'goodwill-1' });
  t.is(other.status, 409, JSON.stringify(other.body));
  t.like(other.body.error, { code: 'idempotency_key_reuse', param: 'reference' });
  t.regex(other.body.error.message, /135\.00/);
  // The same through Idempotency-Key.
  const viaKey = await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: 200 }, { 'idempotency-key': 'goodwill-1' });
  t.is(viaKey.status, 409);
  // A checkout top-up's id would stand for that payment's credit: refused, for either form.
  const stolen = await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: 200, reference: 'topup_0123456789abcdef01234567' });
  t.is(stolen.status, 400);
  t.is(stolen.body.error.param, 'reference');
  t.is((await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: 200 }, { 'idempotency-key': 'TOPUP_abc' })).status, 400);
  // No processor behind an operator's top-up: no processor maximum either.
  t.is((await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: '1000000', reference: 'big' })).status, 201);
  const { sum } = await ledgerSum(a.id);
  t.is(sum, parseCredits('40.44') + parseCredits('135') + parseCredits('1000000'));
  t.is(await gw.deps.wallet.balance(a.id), sum);
});

test('an operator credit: any positive amount once per reference (a won dispute below the top-up minimum)', async (t) => {
  const a = await gw.newAccount();
  const credit = await gw.admin('POST', `/accounts/${a.id}/credits`, { amount_usd: '49.50', reference: 'dispute-won-dp_1' });
  t.is(credit.status, 201, JSON.stringify(credit.body));
  t.like(credit.body, { object: 'credit', amount_usd: '49.50', replayed: false, balance_usd: '89.94' });
  const again = await gw.admin('POST', `/accounts/${a.id}/credits`, { amount_usd: '49.50', reference: 'dispute-won-dp_1' });
  t.like(again.body, { replayed: true, balance_usd: '89.94' });
  t.is((await gw.admin('POST', `/accounts/${a.id}/credits`, { amount_usd: '50', reference: 'dispute-won-dp_1' })).status, 409);
  // Its own namespace: a top-up with the same reference is another op.
  t.is((await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: 150, reference: 'dispute-won-dp_1' })).body.replayed, false);
  for (const bad of [{ amount_usd: 0, reference: 'z' }, { amount_usd: '-1', reference: 'n' }, { amount_usd: 5 }, { amount_usd: 5, reference: 'topup_x' }]) {
    t.is((await gw.admin('POST', `/accounts/${a.id}/credits`, bad)).status, 400, JSON.stringify(bad));
  }
  const { sum, rows } = await ledgerSum(a.id);
  t.is(sum, parseCredits('40.44') + parseCredits('49.5') + parseCredits('150'));
  t.is(rows.find((r) => r._id === `${a.id}:credit:dispute-won-dp_1`)?.kind, 'adjust');
  t.is(await gw.deps.wallet.balance(a.id), sum);
});

test('the admin ledger pages through entries of one millisecond without skipping or repeating any', async (t) => {
  const a = await gw.newAccount();
  // A batch's settlement writes many rows in one millisecond.
  const at = new Date();
  await gw.deps.db.Ledger.insertMany(Array.from({ length: 25 }, (_, i) => ({
    _id: `${a.id}:batch_x_l${i}:charge`, account_id: a.id, kind: 'charge', amount_nano: -1_000 - i, created_at: at, recorded_at: at,
  })));
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r: { status: number; body: { data: Array<{ id: string }>; next_cursor: string | null } } = await gw.admin('GET', `/accounts/${a.id}/ledger?limit=7${cursor ? `&before=${encodeURIComponent(cursor)}` : ''}`);
    t.is(r.status, 200);
    seen.push(...r.body.data.map((e) => e.id));
    cursor = r.body.next_cursor;
    pages += 1;
  } while (cursor && pages < 20);
  t.is(seen.length, 26);
  t.is(new Set(seen).size, 26);
  t.true(seen.includes(`${a.id}:grant`));
});

test('ledger invariant after concurrent top-ups, charges and retried ops', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  const ops: Array<Promise<unknown>> = [];
  let expected = parseCredits('40.44');
  let expectedKeySpend = 0;
  for (let i = 0; i < 10; i++) {
    ops.push(gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: '200.123456789', reference: `p${i}` }));
    expected += parseCredits('200.123456789');
  }
  for (let i = 0; i < 300; i++) {
    const amount = 1_000 + ((i * 7919) % 100_000_000);
    const op = { opId: `req_${i}:charge`, accountId: a.id, keyId: k.id, kind: 'charge' as const, amountNano: -amount, keySpendNano: amount };
    ops.push(gw.deps.wallet.apply(op));
    if (i % 3 === 0) ops.push(gw.deps.wallet.apply(op)); // a retry of the same op
    expected -= amount;
    expectedKeySpend += amount;
  }
  await Promise.all(ops);
  const { sum, rows } = await ledgerSum(a.id);
  t.is(rows.length, 1 + 10 + 300);
  t.is(sum, expected);
  t.is(await gw.deps.wallet.balance(a.id), expected);
  t.is(await gw.deps.wallet.keySpend(k.id), expectedKeySpend);
});

test('gated reservations never pass the balance: 50 concurrent holds of 2 against 40.44 -> exactly 20', async (t) => {
  const a = await gw.newAccount();
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      gw.deps.wallet.apply({ opId: `task_${i}:reserve`, accountId: a.id, kind: 'reserve', amountNano: -parseCredits('2') }, { capNano: null }),
    ),
  );
  t.is(results.filter((r) => r.status === 'applied').length, 20);
  t.is(results.filter((r) => r.status === 'refused').length, 30);
  t.is(await gw.deps.wallet.balance(a.id), parseCredits('0.44'));
  t.is((await ledgerSum(a.id)).sum, parseCredits('0.44'));
});

test('a key spend cap gates holds and bounds remaining_usd', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id, { spend_cap_usd: '5' });
  const hold = (i: number) =>
    gw.deps.wallet.apply({ opId: `c${i}:reserve`, accountId: a.id, keyId: k.id, kind: 'reserve', amountNano: -parseCredits('2'), keySpendNano: parseCredits('2') }, { capNano: parseCredits('5') });
  const rs = await Promise.all([0, 1, 2, 3].map(hold));
  t.is(rs.filter((r) => r.status === 'applied').length, 2);
  const bal = await (await fetch(`${gw.url}/v1/key/balance`, { headers: { authorization: `Bearer ${k.key}` } })).json() as Record<string, string>;
  t.is(bal.remaining_usd, '1.00');
  t.is(bal.used_usd, '4.00');
  t.is(bal.total_usd, '5.00');
});

test('the projection rebuilds from the ledger when Redis loses it, and a retried op still applies once', async (t) => {
  const a = await gw.newAccount();
  const op = { opId: `req_x:charge`, accountId: a.id, kind: 'charge' as const, amountNano: -parseCredits('1.5') };
  await gw.deps.wallet.apply(op);
  await gw.deps.redis.del(accountRedisKeys.balance(a.id), accountRedisKeys.op(a.id, op.opId));
  t.is(await gw.deps.wallet.balance(a.id), parseCredits('38.94'));
  const again = await gw.deps.wallet.apply(op);
  t.is(again.status, 'duplicate');
  t.is(await gw.deps.wallet.balance(a.id), parseCredits('38.94'));
});

test('balance and billing objects keep the spec 2.6 relations', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id, { expires_at: 4102444800 });
  await gw.deps.wallet.apply({ opId: 'r1:charge', accountId: a.id, keyId: k.id, kind: 'charge', amountNano: -123_456_789, keySpendNano: 123_456_789 });
  const h = { authorization: `Bearer ${k.key}` };
  const bal = (await (await fetch(`${gw.url}/v1/key/balance`, { headers: h })).json()) as Record<string, any>;
  t.is(bal.object, 'key.balance');
  t.is(bal.remaining_usd, '40.316543211');
  t.is(bal.used_usd, '0.123456789');
  t.is(bal.total_usd, '40.44');
  t.is(bal.expires_at, 4102444800);
  for (const prefix of ['/v1', '']) {
    const sub = (await (await fetch(`${gw.url}${prefix}/dashboard/billing/subscription`, { headers: h })).json()) as Record<string, any>;
    const use = (await (await fetch(`${gw.url}${prefix}/dashboard/billing/usage?start_date=2026-01-01&end_date=2026-02-01`, { headers: h })).json()) as Record<string, any>;
    t.is(sub.object, 'billing_subscription');
    t.is(typeof sub.hard_limit_usd, 'number');
    t.is(sub.hard_limit_usd, Number(bal.total_usd));
    t.is(sub.access_until, 4102444800);
    t.is(use.object, 'list');
    t.deepEqual(use.daily_costs, []);
    t.is(use.total_usage, Number(bal.used_usd) * 100);
    t.true(Math.abs(sub.hard_limit_usd - use.total_usage / 100 - Number(bal.remaining_usd)) < 1e-9);
  }
  t.is((await fetch(`${gw.url}/v1/dashboard/billing/credit_grants`, { headers: h })).status, 404);
});

test('money that would take a wallet past the nano-exact range (2^53 - 1 nano) is refused, and the ledger still equals the balance', async (t) => {
  const a = await gw.newAccount();
  // 9000000.000000001 twice would be 18000040.440000002: past Number.MAX_SAFE_INTEGER nano, where odd nano are lost.
  const first = await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: '9000000.000000001', reference: 'huge-1' });
  t.is(first.status, 201, JSON.stringify(first.body));
  const second = await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: '9000000.000000001', reference: 'huge-2' });
  t.is(second.status, 400, JSON.stringify(second.body));
  t.like(second.body.error, { code: 'invalid_request', param: 'amount_usd' });
  t.regex(second.body.error.message, /9007199\.254740991/);
  const credit = await gw.admin('POST', `/accounts/${a.id}/credits`, { amount_usd: '7199.254740991', reference: 'huge-3' });
  t.is(credit.status, 400, JSON.stringify(credit.body));
  // Up to the edge is fine, and a replay of money already in is answered as before.
  const edge = await gw.admin('POST', `/accounts/${a.id}/credits`, { amount_usd: '7158.814740990', reference: 'edge' });
  t.is(edge.status, 201, JSON.stringify(edge.body));
  t.is(edge.body.balance_usd, '9007199.254740991');
  t.like((await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: '9000000.000000001', reference: 'huge-1' })).body, { replayed: true });
  const { sum } = await ledgerSum(a.id);
  t.is(await gw.deps.wallet.balance(a.id), sum);
  t.true(Number.isSafeInteger(sum));
});
