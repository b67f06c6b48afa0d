import test from 'ava';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startGateway, type TestGateway } from '../helpers/stack';
import { signStripePayload } from '../../capabilities/billing/stripe';
import type { LedgerDoc } from '../../capabilities/accounts/store';
import { operatorHttpSession } from '../console/browser';

/**
 * Top-ups through Stripe against stripe-mock (started by `npm test`, STRIPE_MOCK_URL): checkout sessions are
 * really created through the SDK; the events are the ones Stripe sends, signed with the SDK's test-header helper.
 * stripe-mock is stateless, so the gateway's own top-up record decides what an event credits.
 */
const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('hex')}`;
const stripeEnv = () => {
  if (!process.env.STRIPE_MOCK_URL) throw new Error('STRIPE_MOCK_URL is not set: run with `npm test`, which starts stripe-mock');
  return { STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_URL: process.env.STRIPE_MOCK_URL };
};

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway(stripeEnv(), { simulator: true });
});
test.after.always(async () => {
  await gw?.close();
});

const NANO = 1_000_000_000;
const usd = (n: number) => Math.round(n * 100) * 10_000_000;

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as any };
}

/** A Stripe event delivery: the raw body and its Stripe-Signature header. */
async function deliver(event: Record<string, unknown>, opts: { secret?: string; signature?: string | null; target?: TestGateway } = {}) {
  const payload = JSON.stringify({ object: 'event', api_version: '2025-01-27', created: Math.floor(Date.now() / 1000), livemode: false, ...event });
  const signature = opts.signature === undefined ? signStripePayload(payload, opts.secret ?? WEBHOOK_SECRET) : opts.signature;
  const res = await fetch(`${(opts.target ?? gw).url}/webhooks/stripe`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...(signature === null ? {} : { 'stripe-signature': signature }) }, body: payload,
  });
  return { status: res.status, body: (await res.json()) as any };
}

const evtId = () => `evt_${randomBytes(8).toString('hex')}`;

function sessionEvent(type: string, topUp: { id: string; session_id: string }, accountId: string, over: Record<string, unknown> = {}) {
  return {
    id: evtId(), type,
    data: { object: { id: topUp.session_id, object: 'checkout.session', client_reference_id: topUp.id, metadata: { topup_id: topUp.id, account_id: accountId },
      payment_status: 'paid', status: 'complete', amount_total: 15000, currency: 'usd', payment_intent: `pi_${topUp.id}`, ...over } },
  };
}

async function account() {
  const acct = await gw.newAccount();
  const key = await gw.newKey(acct.id);
  return { id: acct.id, key: key.key };
}

async function checkout(key: string, amount: unknown = 150) {
  return post('/api/v1/billing/checkout', { amount_usd: amount }, { authorization: `Bearer ${key}` });
}

/** Every ledger row of the wallet adds up to the balance the gateway serves. */
async function ledgerSum(accountId: string): Promise<number> {
  const rows = await gw.deps.db.Ledger.find({ account_id: accountId }).lean<LedgerDoc[]>();
  return rows.reduce((a, r) => a + r.amount_nano, 0);
}

test('a checkout is created through Stripe (stripe-mock) and the gateway keeps its own pending top-up', async (t) => {
  const a = await account();
  const res = await checkout(a.key, 150);
  t.is(res.status, 201, JSON.stringify(res.body));
  t.like(res.body, { amount_usd: '150.00', status: 'pending' });
  t.regex(res.body.id, /^topup_/);
  t.regex(res.body.url, /^https:\/\//);
  t.regex(res.body.session_id, /^cs_/);
  const doc = await gw.deps.db.conn.collection('topups').findOne({ _id: res.body.id });
  t.like(doc, { account_id: a.id, amount_nano: usd(150), amount_cents: 15000, status: 'pending', processor: 'stripe', session_id: res.body.session_id });
  const polled = await fetch(`${gw.url}/api/v1/billing/topups/${res.body.id}`, { headers: { authorization: `Bearer ${a.key}` } });
  t.like(await polled.json(), { id: res.body.id, status: 'pending', amount_usd: '150.00' });
  // Another account's key cannot read it.
  const other = await account();
  t.is((await fetch(`${gw.url}/api/v1/billing/topups/${res.body.id}`, { headers: { authorization: `Bearer ${other.key}` } })).status, 404);
});

test('amounts below the minimum (134.8), fractions of a cent and unauthenticated calls are refused in the chat-completions error shape', async (t) => {
  const a = await account();
  const low = await checkout(a.key, 134.79);
  t.is(low.status, 400);
  t.like(low.body.error, { type: 'invalid_request_error', param: 'amount_usd' });
  t.regex(low.body.error.message, /minimum of 134\.8/);
  t.is((await checkout(a.key, '134.805')).status, 400);
  t.is((await checkout(a.key, 'lots')).status, 400);
  t.is((await checkout(a.key, 134.8)).status, 201);
  // Above Stripe's largest USD charge: refused here with its field, not a 502 from the processor.
  const high = await checkout(a.key, '1000000');
  t.is(high.status, 400);
  t.is(high.body.error.param, 'amount_usd');
  const anon = await post('/api/v1/billing/checkout', { amount_usd: 150 });
  t.is(anon.status, 401);
  t.is(anon.body.error.type, 'authentication_error');
  t.is(await gw.deps.db.conn.collection('topups').countDocuments({ account_id: a.id }), 1);
});

test('an operator\'s console top-up is for the account it chose, also one older than the 200 newest it lists', async (t) => {
  const target = await gw.newAccount({ name: 'target-old-customer' });
  for (let i = 0; i < 201; i += 25) {
    await Promise.all(Array.from({ length: Math.min(25, 201 - i) }, (_, j) => gw.newAccount({ name: `filler-${i + j}` })));
  }
  const op = await operatorHttpSession(gw.url, gw.config.ADMIN_TOKEN);
  const switched = await op.post('/console/account', { account_id: target.id });
  t.is(switched.status, 302);
  t.true((await (await op.get('/console/topup')).text()).includes('target-old-customer'), 'the top-up page names the chosen account');
  const res = await post('/api/v1/billing/checkout', { amount_usd: 150 }, { cookie: op.cookie, 'x-csrf-token': op.csrf, origin: gw.url });
  t.is(res.status, 201, JSON.stringify(res.body));
  t.is((await gw.deps.db.conn.collection('topups').findOne({ _id: res.body.id }))?.account_id, target.id);
});

test('10 concurrent deliveries of completed events (5 copies of one event, 5 other ids) credit the top-up once; a replay later changes nothing', async (t) => {
  const a = await account();
  const top = (await checkout(a.key, 150)).body;
  const one = sessionEvent('checkout.session.completed', top, a.id);
  const events = [...Array.from({ length: 5 }, () => one), ...Array.from({ length: 5 }, () => ({ ...one, id: evtId() }))];
  const answers = await Promise.all(events.map((e) => deliver(e)));
  t.deepEqual(answers.map((r) => r.status), Array(10).fill(200));
  t.is(answers.filter((r) => r.body.outcome === 'credited').length, 1, JSON.stringify(answers.map((r) => r.body)));
  t.is(await gw.deps.wallet.balance(a.id), usd(40.44) + usd(150));
  t.is(await gw.deps.db.Ledger.countDocuments({ account_id: a.id, kind: 'topup' }), 1);
  t.is(await gw.deps.db.conn.collection('payment_events').countDocuments({ topup_id: top.id }), 6, 'each event id recorded once');
  const replay = await deliver(one);
  t.is(replay.status, 200);
  t.true(replay.body.duplicate);
  t.is(await gw.deps.wallet.balance(a.id), usd(190.44));
  t.is(await ledgerSum(a.id), await gw.deps.wallet.balance(a.id));
  t.like(await gw.deps.db.conn.collection('topups').findOne({ _id: top.id }), { status: 'paid', payment_intent: `pi_${top.id}` });
});

test('a delayed payment: completed while unpaid credits nothing, async_payment_succeeded credits once', async (t) => {
  const a = await account();
  const top = (await checkout(a.key, 200)).body;
  const pending = await deliver(sessionEvent('checkout.session.completed', top, a.id, { payment_status: 'unpaid' }));
  t.is(pending.status, 200);
  t.is(await gw.deps.wallet.balance(a.id), usd(40.44));
  const ok = sessionEvent('checkout.session.async_payment_succeeded', top, a.id);
  const [x, y] = await Promise.all([deliver(ok), deliver({ ...ok, id: evtId() })]);
  t.deepEqual([x.status, y.status], [200, 200]);
  t.is(await gw.deps.wallet.balance(a.id), usd(240.44));
  t.is(await ledgerSum(a.id), usd(240.44));
});

test('forged, stale and missing signatures are 400 and change nothing', async (t) => {
  const a = await account();
  const top = (await checkout(a.key, 150)).body;
  const e = sessionEvent('checkout.session.completed', top, a.id);
  const forged = await deliver(e, { secret: 'whsec_not-the-secret' });
  t.is(forged.status, 400);
  t.is(forged.body.error.type, 'invalid_request_error');
  t.is((await deliver(e, { signature: null })).status, 400);
  t.is((await deliver(e, { signature: 't=1,v1=00' })).status, 400);
  const stale = signStripePayload(JSON.stringify(e), WEBHOOK_SECRET, Math.floor(Date.now() / 1000) - 3600);
  t.is((await deliver(e, { signature: stale })).status, 400);
  t.is(await gw.deps.wallet.balance(a.id), usd(40.44));
  t.is(await gw.deps.db.conn.collection('payment_events').countDocuments({ _id: e.id as never }), 0);
  // The genuine one still credits afterwards (nothing was recorded for the forged ones).
  t.is((await deliver(e)).body.outcome, 'credited');
  t.is(await gw.deps.wallet.balance(a.id), usd(190.44));
});

test('refunds and disputes debit once each; the balance may go negative and the next billable request is refused', async (t) => {
  const a = await account();
  const top = (await checkout(a.key, 150)).body;
  await deliver(sessionEvent('checkout.session.completed', top, a.id));
  t.is(await gw.deps.wallet.balance(a.id), usd(190.44));
  // Spend 100 of it (a charge the way the chat path writes one).
  await gw.deps.wallet.apply({ opId: `${a.id}:test-spend`, accountId: a.id, kind: 'charge', amountNano: -100 * NANO });

  const charge = (refunded: number) => ({
    id: evtId(), type: 'charge.refunded',
    data: { object: { id: `ch_${top.id}`, object: 'charge', amount: 15000, amount_refunded: refunded, payment_intent: `pi_${top.id}`, metadata: { topup_id: top.id, account_id: a.id } } },
  });
  // A partial refund of 50, delivered 5 times at once (other event ids): debited once.
  const partial = charge(5000);
  const r1 = await Promise.all([partial, ...Array.from({ length: 4 }, () => ({ ...partial, id: evtId() }))].map((e) => deliver(e)));
  t.deepEqual(r1.map((r) => r.status), Array(5).fill(200));
  t.is(await gw.deps.wallet.balance(a.id), usd(90.44) - usd(50));
  // The rest refunded (cumulative 150): 100 more; the balance goes below zero.
  t.is((await deliver(charge(15000))).status, 200);
  t.is((await deliver(charge(15000))).status, 200);
  t.is(await gw.deps.wallet.balance(a.id), usd(90.44) - usd(150));
  t.true((await gw.deps.wallet.balance(a.id)) < 0);
  // The top-up says what was taken back (its status stays paid).
  const view = await (await fetch(`${gw.url}/api/v1/billing/topups/${top.id}`, { headers: { authorization: `Bearer ${a.key}` } })).json();
  t.like(view, { status: 'paid', amount_usd: '150.00', refunded_usd: '150.00', disputed_usd: '0.00' });
  // The console's top-up page lists the refunds beside the top-up.
  const op = await operatorHttpSession(gw.url, gw.config.ADMIN_TOKEN);
  await op.post('/console/account', { account_id: a.id });
  const topUpPage = await (await op.get('/console/topup')).text();
  t.is(topUpPage.match(/refund of a top-up/g)?.length, 2);
  t.is(await ledgerSum(a.id), await gw.deps.wallet.balance(a.id));

  const chat = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
  });
  t.is(chat.status, 402);
  await chat.body?.cancel();

  // A dispute of the same (already fully refunded) charge takes nothing more: never more than was paid.
  const dispute = { id: evtId(), type: 'charge.dispute.created', data: { object: { id: 'dp_1', object: 'dispute', amount: 15000, charge: `ch_${top.id}`, payment_intent: `pi_${top.id}`, status: 'needs_response' } } };
  t.is((await deliver(dispute)).status, 200);
  t.is(await gw.deps.wallet.balance(a.id), usd(90.44) - usd(150));
});

test('a dispute debits the disputed amount once, however often its event arrives', async (t) => {
  const a = await account();
  const top = (await checkout(a.key, 300)).body;
  await deliver(sessionEvent('checkout.session.completed', top, a.id, { amount_total: 30000 }));
  t.is(await gw.deps.wallet.balance(a.id), usd(340.44));
  const dispute = { id: evtId(), type: 'charge.dispute.created', data: { object: { id: `dp_${top.id}`, object: 'dispute', amount: 30000, charge: `ch_${top.id}`, payment_intent: `pi_${top.id}`, status: 'needs_response' } } };
  const answers = await Promise.all([dispute, ...Array.from({ length: 9 }, () => ({ ...dispute, id: evtId() }))].map((e) => deliver(e)));
  t.deepEqual(answers.map((r) => r.status), Array(10).fill(200));
  t.is(await gw.deps.wallet.balance(a.id), usd(40.44));
  t.is(await gw.deps.db.Ledger.countDocuments({ account_id: a.id, kind: 'adjust' }), 1);
  t.is(await ledgerSum(a.id), usd(40.44));
});

test('unknown top-ups and unhandled event types are answered 2xx and change nothing', async (t) => {
  const a = await account();
  const before = await gw.deps.wallet.balance(a.id);
  const unknown = await deliver(sessionEvent('checkout.session.completed', { id: 'topup_nope', session_id: 'cs_nope' }, a.id));
  t.is(unknown.status, 200);
  t.regex(unknown.body.outcome, /unknown top-up/);
  const other = await deliver({ id: evtId(), type: 'customer.created', data: { object: { id: 'cus_1', object: 'customer' } } });
  t.is(other.status, 200);
  t.regex(other.body.outcome, /unhandled/);
  const refundOfNothing = await deliver({ id: evtId(), type: 'charge.refunded', data: { object: { id: 'ch_x', object: 'charge', amount: 15000, amount_refunded: 15000, payment_intent: 'pi_unknown', metadata: {} } } });
  t.is(refundOfNothing.status, 200);
  t.is(await gw.deps.wallet.balance(a.id), before);
});

test('top-ups switched off: checkout is 404, but a session started before still credits and its refund still debits (the webhook stays on)', async (t) => {
  const off = await startGateway({ ...stripeEnv(), TOPUPS_ENABLED: 'false' });
  try {
    // A session started while top-ups were on: its record as the checkout wrote it.
    const acct = await off.newAccount();
    const a = { id: acct.id, key: (await off.newKey(acct.id)).key };
    const top = { id: `topup_${randomBytes(12).toString('hex')}`, session_id: `cs_test_${randomBytes(8).toString('hex')}` };
    await off.deps.db.conn.collection('topups').insertOne({
      _id: top.id as never, account_id: a.id, amount_nano: usd(150), amount_cents: 15000, currency: 'usd', processor: 'stripe', session_id: top.session_id, url: 'https://checkout.stripe.com/x',
      status: 'pending', created_by: 'test', created_at: new Date(), paid_at: null, payment_intent: null, refunded_cents: 0, disputes: {},
    });
    const refused = await fetch(`${off.url}/api/v1/billing/checkout`, {
      method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount_usd: 150 }),
    });
    t.is(refused.status, 404);
    const paid = await deliver(sessionEvent('checkout.session.completed', top, a.id), { target: off });
    t.is(paid.body.outcome, 'credited');
    const refund = { id: evtId(), type: 'charge.refunded', data: { object: { id: `ch_${top.id}`, object: 'charge', amount: 15000, amount_refunded: 5000, payment_intent: `pi_${top.id}`, metadata: { topup_id: top.id, account_id: a.id } } } };
    t.is((await deliver(refund, { target: off })).status, 200);
    t.is(await off.deps.wallet.balance(a.id), usd(40.44) + usd(100));
  } finally {
    await off.close();
  }
});

test('development stand-in: the checkout URLs come from PUBLIC_BASE_URL whatever Host, Origin and X-Forwarded-* say; paying credits once', async (t) => {
  const dev = await startGateway({ DEPLOYMENT_MODE: 'test' });
  try {
    const acct = await dev.newAccount();
    const key = await dev.newKey(acct.id);
    const res = await fetch(`${dev.url}/api/v1/billing/checkout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', origin: 'http://127.0.0.1:1', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
      body: JSON.stringify({ amount_usd: 150 }),
    });
    t.is(res.status, 201);
    const top = (await res.json()) as { id: string; url: string };
    t.true(top.url.startsWith(`${dev.config.PUBLIC_BASE_URL}/_processor/checkout/`), top.url);
    t.is((await fetch(top.url)).status, 200);
    const pay = await fetch(`${top.url}/pay`, { method: 'POST', redirect: 'manual', headers: { origin: 'http://127.0.0.1:1', host: 'evil.example' } });
    t.is(pay.status, 302);
    t.is(pay.headers.get('location'), `${dev.config.PUBLIC_BASE_URL}/console/topup?topup=${top.id}`);
    // Paying again (the page's button twice) credits nothing more.
    t.is((await fetch(`${top.url}/pay`, { method: 'POST', redirect: 'manual' })).status, 302);
    t.is(await dev.deps.wallet.balance(acct.id), usd(190.44));
  } finally {
    await dev.close();
  }
});

test('production: every stand-in path is 404, checkouts go to Stripe', async (t) => {
  const prod = await startGateway({ ...stripeEnv(), DEPLOYMENT_MODE: 'production' });
  try {
    const acct = await prod.newAccount();
    const key = await prod.newKey(acct.id);
    const paths: Array<[string, string]> = [['GET', '/_processor/checkout/cs_x'], ['POST', '/_processor/checkout/cs_x/pay'], ['POST', '/webhooks/payments'], ['GET', '/_processor/checkout/']];
    for (const [method, path] of paths) {
      const res = await fetch(`${prod.url}${path}`, { method });
      t.is(res.status, 404, `${method} ${path}`);
      await res.body?.cancel();
    }
    const res = await fetch(`${prod.url}/api/v1/billing/checkout`, {
      method: 'POST', headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount_usd: 150 }),
    });
    t.is(res.status, 201);
    const body = (await res.json()) as { url: string };
    t.false(body.url.includes('/_processor/'));
    t.like(await prod.deps.db.conn.collection('topups').findOne({ account_id: acct.id }), { processor: 'stripe' });
  } finally {
    await prod.close();
  }
});

/** Runs gateway/server.ts with `env` and returns how it ended (it must end before listening). */
function runGateway(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'gateway/server.ts'], {
      env: { PATH: process.env.PATH ?? '', ADMIN_TOKEN: `admin-${randomBytes(12).toString('hex')}`, KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'), PORT: '0', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000); // loading the gateway's modules under tsx is slow on a busy machine
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

test('a production gateway with top-ups on and no Stripe keys refuses to start, naming the variables', async (t) => {
  t.timeout(600_000);
  const none = await runGateway({ DEPLOYMENT_MODE: 'production', MONGO_URL: 'mongodb://127.0.0.1:1/x', REDIS_URL: 'redis://127.0.0.1:1' });
  t.is(none.code, 1);
  t.regex(none.stderr, /refusing to start/);
  for (const name of ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'PUBLIC_BASE_URL', 'TOPUPS_ENABLED=false']) t.true(none.stderr.includes(name), name);
  t.false(/\n\s+at /.test(none.stderr), 'no stack trace');
  const halfway = await runGateway({ DEPLOYMENT_MODE: 'production', STRIPE_SECRET_KEY: 'sk_live_x123456', PUBLIC_BASE_URL: 'https://api.example.com' });
  t.is(halfway.code, 1);
  t.true(halfway.stderr.includes('STRIPE_WEBHOOK_SECRET'));
  t.false(halfway.stderr.includes('STRIPE_SECRET_KEY'));
});

test('a checkout that would take the wallet past the nano-exact range is refused before the payer pays', async (t) => {
  const a = await account();
  // An operator's top-up brings the wallet to 9007000 credits: 199.254740991 of room is left before 2^53 - 1 nano.
  t.is((await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: '9006959.56', reference: 'near-the-edge' })).status, 201);
  const over = await checkout(a.key, 200);
  t.is(over.status, 400, JSON.stringify(over.body));
  t.like(over.body.error, { type: 'invalid_request_error', param: 'amount_usd' });
  t.is(await gw.deps.db.conn.collection('topups').countDocuments({ account_id: a.id }), 0);
  t.is((await checkout(a.key, 199.25)).status, 201);
});
