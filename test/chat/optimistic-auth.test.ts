// Optimistic authentication on the chat endpoints (gateway/middleware/auth.ts): a call is read, validated
// and routed on the key's last known state while its fresh state is read. Whatever changed in between (a
// key disabled, deleted or capped, a model taken off the whitelist, an account at its rate limit) must be
// answered exactly as a call that waited: the same status, code and headers, no content, no charge, and
// the usage row a refusal gets. The counter shows the optimistic path was taken (else these would prove
// nothing). Every case runs under both overlaps: `upstream` (the upstream call goes out at once; a refusal
// stops it) and `prepare` (the default: no upstream call before the fresh state admits the call, so a
// refused call made none). A change this process makes itself drops or lowers its guesses at once: the
// refusal cases make theirs as another gateway would (`elsewhere`), and the last cases check that a
// change made here is never acted on stale, under either overlap: no upstream call.
import test, { type ExecutionContext } from 'ava';
import { accountRedisKeys } from '../../capabilities/accounts/store';
import { KeyService } from '../../capabilities/accounts/keys';
import { startGateway, type TestGateway } from '../helpers/stack';
import { AUTH_MESSAGES } from '../../domain/errors';
import { counters } from '../../platform/metrics/counters';
import { addFault, chargeEntry, freshKey, post, sleep, sseEvents, usageRow, user, type Reply } from './helpers';

const MODES = ['upstream', 'prepare'] as const;
type Mode = (typeof MODES)[number];
const gateways = new Map<Mode, TestGateway>();
test.before(async () => {
  for (const mode of MODES) gateways.set(mode, await startGateway({ CHAT_AUTH_OVERLAP: mode }, { simulator: true }));
});
test.after.always(async () => {
  for (const g of gateways.values()) await g.close();
});

const body = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-5.1', messages: user('hello'), max_tokens: 8, ...extra });
const refusedSoFar = () => counters.chatOptimisticAuth.get({ outcome: 'refused' });
const admittedSoFar = () => counters.chatOptimisticAuth.get({ outcome: 'admitted' });
/** Requests the mode's simulator received, on every channel. */
const upstreamTotal = async (gw: TestGateway) => (await gw.control('GET', '/requests')).count as number;

/**
 * The key service of another gateway on the same stores: what it changes, this gateway is not told of
 * (capabilities/accounts/auth-lookup.ts follows only what its own process publishes or debits), so its
 * guesses stay as they were until the fresh read.
 */
const elsewhere = (gw: TestGateway) =>
  new KeyService(gw.deps.db, gw.deps.redis, { encryptionKey: gw.deps.config.KEY_ENCRYPTION_KEY, serviceTag: gw.deps.config.KEY_SERVICE_TAG });

/**
 * A refused call: nothing generated reached the client and nothing was charged; under `prepare` it made
 * no upstream call either.
 */
async function assertRefused(t: ExecutionContext, gw: TestGateway, mode: Mode, call: () => Promise<Reply>, status: number, code: string | null, accountId: string): Promise<Reply> {
  const before = await gw.deps.wallet.balance(accountId);
  const upstream = await upstreamTotal(gw);
  const r = await call();
  t.is(r.status, status, r.text);
  if (code) t.is(r.json?.error?.code, code, r.text);
  t.false(r.text.includes('choices'), 'no upstream content');
  t.is(await chargeEntry(gw, r.trace), null, 'no charge');
  t.is(await gw.deps.wallet.balance(accountId), before, 'balance untouched');
  if (mode === 'prepare') t.is(await upstreamTotal(gw), upstream, 'no upstream call before the fresh state admitted the call');
  return r;
}

for (const mode of MODES) {
  const gwOf = () => gateways.get(mode)!;
  const chat = (key: string, extra: Record<string, unknown> = {}) => post(gwOf(), '/v1/chat/completions', body(extra), { key });

  test.serial(`${mode}: a key disabled after its last call: the next optimistic call is 401 revoked, streaming or not, and logs no usage`, async (t) => {
    const gw = gwOf();
    const acc = await freshKey(gw);
    for (const stream of [false, true]) {
      await gw.admin('PATCH', `/keys/${acc.keyId}`, { enabled: true });
      t.is((await chat(acc.key)).status, 200);
      await elsewhere(gw).update(acc.keyId, { enabled: false });
      const refused = refusedSoFar();
      const r = await assertRefused(t, gw, mode, () => chat(acc.key, { stream }), 401, 'invalid_api_key', acc.accountId);
      t.is(r.json.error.message, AUTH_MESSAGES.revoked);
      t.is(refusedSoFar(), refused + 1, 'the call was optimistic');
      t.is(await usageRow(gw, r.trace, 300), null, 'a 401 has no usage row');
    }
  });

  test.serial(`${mode}: a deleted key: 401 invalid on every protocol`, async (t) => {
    const gw = gwOf();
    for (const [path, b] of [
      ['/v1/chat/completions', body()],
      ['/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 8, messages: user('hi') }],
      ['/v1/responses', { model: 'gpt-5.1', input: 'hi', max_output_tokens: 8 }],
      ['/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }],
    ] as const) {
      const acc = await freshKey(gw);
      t.is((await post(gw, path, b, { key: acc.key })).status, 200, path);
      await elsewhere(gw).remove(acc.keyId);
      const refused = refusedSoFar();
      // Each protocol's error shape (spec 1 section 7): the message is the same.
      const r = await assertRefused(t, gw, mode, () => post(gw, path, b, { key: acc.key }), 401, null, acc.accountId);
      t.is(r.json.error.message, AUTH_MESSAGES.invalid, path);
      t.is(refusedSoFar(), refused + 1, `${path}: the call was optimistic`);
    }
  });

  test.serial(`${mode}: a spend cap reached since the last call: 402, one rejected usage row without attempts, no charge`, async (t) => {
    const gw = gwOf();
    const acc = await freshKey(gw);
    t.is((await chat(acc.key)).status, 200);
    await elsewhere(gw).update(acc.keyId, { spend_cap_nano: 0 });
    const refused = refusedSoFar();
    const r = await assertRefused(t, gw, mode, () => chat(acc.key, { stream: true }), 402, 'quota_exceeded', acc.accountId);
    t.is(refusedSoFar(), refused + 1, 'the call was optimistic');
    const row = await usageRow(gw, r.trace);
    t.is(row?.status, 'rejected');
    t.is(row?.cost_nano, 0);
    t.falsy(row?.attempts?.length, 'a refused call has no upstream attempts');
  });

  test.serial(`${mode}: a pre-charge above the balance left by the key's own last call: 402 and no upstream call`, async (t) => {
    const gw = gwOf();
    const acc = await freshKey(gw);
    // The guess was read before this call's charge, which takes 80 % of the balance; the charge is counted
    // into the guess (the wallet tells the auth lookup of every debit it sends), so the next call sees the
    // estimate does not fit and waits.
    const start = await gw.deps.wallet.balance(acc.accountId);
    await gw.control('POST', '/usage', { channel: 'openai-a', usage: { prompt_tokens: 5, output_tokens: Math.floor((start * 0.8) / 10_000) } });
    t.is((await chat(acc.key)).status, 200);
    await gw.control('POST', '/reset');
    const balance = await gw.deps.wallet.balance(acc.accountId);
    const upstream = await upstreamTotal(gw);
    // gpt-5.1 output: 10,000 nano a token; this estimate is above the balance, and below half the first one.
    const r = await chat(acc.key, { max_tokens: Math.ceil(balance / 10_000) + 10 });
    t.is(r.status, 402, r.text);
    t.is(await upstreamTotal(gw), upstream, 'spec 1 section 8: 402 and no upstream call');
  });

  test.serial(`${mode}: a model taken off the key whitelist since the last call: 400 model_not_allowed, as a call that waited`, async (t) => {
    const gw = gwOf();
    const acc = await freshKey(gw);
    t.is((await chat(acc.key)).status, 200);
    await elsewhere(gw).update(acc.keyId, { allowed_models: ['gpt-5-mini'] });
    const admitted = admittedSoFar();
    await assertRefused(t, gw, mode, () => chat(acc.key), 400, 'model_not_allowed', acc.accountId);
    t.is(admittedSoFar(), admitted + 1, 'admitted on the fresh key, then refused on its whitelist');
  });

  test.serial(`${mode}: the account at its rate limit through another key: 429 with the limiter headers`, async (t) => {
    const gw = gwOf();
    const acc = await freshKey(gw);
    const other = await gw.newKey(acc.accountId);
    t.is((await gw.admin('PATCH', `/accounts/${acc.accountId}`, { rate_limit: { rpm: 10 } })).status, 200);
    const first = await chat(acc.key);
    t.is(first.status, 200);
    t.is(first.headers.get('x-ratelimit-limit-requests'), '10');
    for (let i = 0; i < 9; i++) t.is((await chat(other.key)).status, 200);
    const refused = refusedSoFar();
    const r = await assertRefused(t, gw, mode, () => chat(acc.key), 429, 'rate_limit_exceeded', acc.accountId);
    t.is(refusedSoFar(), refused + 1, 'the call was optimistic (its guess had 9 of 10 left)');
    t.is(r.headers.get('x-ratelimit-limit-requests'), '10');
    t.is(r.headers.get('x-ratelimit-remaining-requests'), '0');
    t.truthy(r.headers.get('retry-after'));
  });

  test.serial(`${mode}: an admitted optimistic call is answered and charged as any other, with the limiter headers, and frees its slot`, async (t) => {
    const gw = gwOf();
    const acc = await freshKey(gw);
    await gw.admin('PATCH', `/accounts/${acc.accountId}`, { rate_limit: { rpm: 1000, concurrency: 50 } });
    t.is((await chat(acc.key)).status, 200);
    for (const stream of [false, true]) {
      const admitted = admittedSoFar();
      const before = await gw.deps.wallet.balance(acc.accountId);
      const r = await chat(acc.key, stream ? { stream, stream_options: { include_usage: true } } : {});
      t.is(r.status, 200, r.text);
      t.is(admittedSoFar(), admitted + 1, 'the call was optimistic');
      t.is(r.headers.get('x-ratelimit-limit-requests'), '1000');
      t.is(r.headers.get('x-ratelimit-limit-concurrency'), '50');
      if (stream) t.is(sseEvents(r.text).at(-1)?.data, '[DONE]');
      const entry = await chargeEntry(gw, r.trace);
      t.truthy(entry);
      t.is(before - (await gw.deps.wallet.balance(acc.accountId)), -entry.amount_nano);
      t.is((await usageRow(gw, r.trace))?.status, 'success');
    }
    t.is(await gw.deps.redis.zcard(accountRedisKeys.rateLeases(acc.accountId)), 0, 'every concurrency slot freed');
  });

  test.serial(`${mode}: a refusal that comes after the upstream answered (streaming or not): the refusal, nothing relayed, and the gateway lives on`, async (t) => {
    const gw = gwOf();
    const lookup = gw.deps.authLookup;
    const read = lookup.byHash.bind(lookup);
    // The fresh state comes 150 ms late: under `upstream` the simulator has answered by then, so the refusal
    // meets an answer already in hand (a stream's body unread), which must be dropped, not relayed.
    lookup.byHash = async (...args: Parameters<typeof read>) => {
      const snapshot = await read(...args);
      await sleep(150);
      return snapshot;
    };
    try {
      for (const stream of [true, false]) {
        // Refused by the fresh state itself (the key disabled), and admitted by it but not by the pre-charge
        // on it (a spend cap with a nano left: the key is not spent, this call's estimate does not fit).
        for (const change of ['disabled', 'capped'] as const) {
          const acc = await freshKey(gw);
          t.is((await chat(acc.key)).status, 200);
          const spent = await gw.deps.wallet.keySpend(acc.keyId);
          await elsewhere(gw).update(acc.keyId, change === 'disabled' ? { enabled: false } : { spend_cap_nano: spent + 1 });
          const before = [refusedSoFar(), admittedSoFar()];
          const status = change === 'disabled' ? 401 : 402;
          await assertRefused(t, gw, mode, () => chat(acc.key, { stream }), status, change === 'disabled' ? 'invalid_api_key' : 'quota_exceeded', acc.accountId);
          t.is(refusedSoFar() + admittedSoFar(), before[0] + before[1] + 1, 'the call was optimistic');
        }
      }
    } finally {
      delete (lookup as Partial<typeof lookup>).byHash;
    }
    // Still serving: an unread upstream body destroyed with nobody listening for its 'error' ended the process.
    await sleep(100);
    t.is((await chat((await freshKey(gw)).key, { stream: true })).status, 200);
  });

  test.serial(`${mode}: a key or account changed through this gateway: the next call waits for the fresh state and makes no upstream call`, async (t) => {
    const gw = gwOf();
    const changes: Array<[string, (acc: { accountId: string; keyId: string }) => Promise<{ status: number }>, number]> = [
      ['key disabled', (acc) => gw.admin('PATCH', `/keys/${acc.keyId}`, { enabled: false }), 401],
      ['key deleted', (acc) => gw.admin('DELETE', `/keys/${acc.keyId}`), 401],
      ['spend cap reached', (acc) => gw.admin('PATCH', `/keys/${acc.keyId}`, { spend_cap_usd: '0' }), 402],
      ['account deactivated', (acc) => gw.admin('PATCH', `/accounts/${acc.accountId}`, { status: 'inactive' }), 401],
    ];
    for (const [what, change, status] of changes) {
      const acc = await freshKey(gw);
      t.is((await chat(acc.key)).status, 200, what);
      t.true((await change(acc)).status < 300, what);
      const [admitted, refused, upstream] = [admittedSoFar(), refusedSoFar(), await upstreamTotal(gw)];
      const r = await chat(acc.key, { stream: true });
      t.is(r.status, status, `${what}: ${r.text}`);
      t.is(await upstreamTotal(gw), upstream, `${what}: no upstream call`);
      t.is(admittedSoFar() + refusedSoFar(), admitted + refused, `${what}: the call did not act on its guess`);
    }
  });

  test.serial(`${mode}: money this gateway takes out of the wallet (a debit, another key's charge) lowers the guess: a pre-charge that no longer fits is 402 with no upstream call`, async (t) => {
    const gw = gwOf();
    for (const by of ['a refund debit', "another key's charge"] as const) {
      const acc = await freshKey(gw);
      t.is((await chat(acc.key)).status, 200);
      const balance = await gw.deps.wallet.balance(acc.accountId);
      // Leave a tenth of the balance: an estimate of a fifth fitted the guess twice over before.
      const take = Math.floor(balance * 0.9);
      if (by === 'a refund debit') {
        t.is((await gw.deps.wallet.apply({ opId: `${acc.accountId}:test-refund`, accountId: acc.accountId, kind: 'adjust', amountNano: -take, ref: 'test' })).status, 'applied');
      } else {
        const other = await gw.newKey(acc.accountId);
        await gw.control('POST', '/usage', { channel: 'openai-a', usage: { prompt_tokens: 5, output_tokens: Math.floor(take / 10_000) } });
        t.is((await chat(other.key)).status, 200);
        await gw.control('POST', '/reset');
      }
      const upstream = await upstreamTotal(gw);
      // gpt-5.1 output: 10,000 nano a token; an estimate of a fifth of the balance before the debit.
      const r = await chat(acc.key, { max_tokens: Math.ceil(balance / 5 / 10_000) });
      t.is(r.status, 402, `${by}: ${r.text}`);
      t.is(await upstreamTotal(gw), upstream, `${by}: spec 1 section 8: 402 and no upstream call`);
    }
  });

  test.serial(`${mode}: an admitted stream the upstream cuts while the fresh state is on its way: what came first is relayed and billed`, async (t) => {
    const gw = gwOf();
    const lookup = gw.deps.authLookup;
    const read = lookup.byHash.bind(lookup);
    const acc = await freshKey(gw);
    t.is((await chat(acc.key)).status, 200);
    // The fresh state comes 150 ms late: under `upstream` the simulator has sent its first chunks and cut
    // the connection by then. An unread undici body drops what arrived when its connection fails, so the
    // stream is read while the call waits (platform/read-ahead.ts).
    lookup.byHash = async (...args: Parameters<typeof read>) => {
      const snapshot = await read(...args);
      await sleep(150);
      return snapshot;
    };
    try {
      await addFault(gw, 'openai-a', { type: 'cut', after_chunks: 4 }, 1);
      const before = await gw.deps.wallet.balance(acc.accountId);
      const admitted = admittedSoFar();
      const r = await chat(acc.key, { stream: true, max_tokens: 20, messages: user('Five words please now') });
      t.is(admittedSoFar(), admitted + 1, 'the call was optimistic and admitted');
      t.is(r.status, 200, r.text);
      const content = sseEvents(r.text)
        .filter((e) => e.data !== '[DONE]')
        .map((e) => JSON.parse(e.data).choices?.[0]?.delta?.content ?? '')
        .join('');
      t.true(content.length > 0, `the chunks sent before the cut reached the client: ${r.text}`);
      const row = await usageRow(gw, r.trace);
      t.is(row.status, 'interrupted');
      t.is(row.error_code, 'upstream_cut');
      t.true(row.cost_nano > 0, 'billed on what was delivered');
      t.is(before - (await gw.deps.wallet.balance(acc.accountId)), row.cost_nano);
    } finally {
      delete (lookup as Partial<typeof lookup>).byHash;
      await gw.control('POST', '/reset');
    }
  });

  test.serial(`${mode}: a key this process has not seen yet is not optimistic: the call waits`, async (t) => {
    const gw = gwOf();
    const acc = await freshKey(gw);
    const [admitted, refused] = [admittedSoFar(), refusedSoFar()];
    t.is((await chat(acc.key)).status, 200);
    t.is(admittedSoFar(), admitted);
    t.is(refusedSoFar(), refused);
  });
}
