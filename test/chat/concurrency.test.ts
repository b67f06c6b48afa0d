// 200 concurrent streaming requests on one account, some cut by the
// upstream, some abandoned by the client: the ledger, the usage rows and the
// balance must add up to the nano, with one row per request.
import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { addFault, freshKey, sleep, user } from './helpers';

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { simulator: true });
});
test.after.always(async () => gw?.close());

type Plan = { path: string; body: Record<string, unknown>; abort: boolean; expect: 'success' | 'client_closed' | 'upstream_cut' };

/** Stream one request to its end, or abort it after its first content bytes. Resolves to its trace id. */
async function run(key: string, p: Plan): Promise<string> {
  const ac = new AbortController();
  const res = await fetch(gw.url + p.path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(p.body), signal: ac.signal });
  const trace = res.headers.get('x-gateway-trace')!;
  if (res.status !== 200) throw new Error(`${p.path}: ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += dec.decode(value, { stream: true });
    if (p.abort && /"content":"[^"]+"/.test(text)) {
      ac.abort();
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  return trace;
}

test('200 concurrent streams, some cut, some abandoned: ledger == usage rows == balance delta, one row each', async (t) => {
  const { accountId, key } = await freshKey(gw);
  // Slow enough that a client can leave mid-stream; cut faults only on channels no client abandons.
  await gw.control('POST', '/latency', { channel: 'openai-a', ttft_ms: 0, token_delay_ms: 10 });
  await gw.control('POST', '/latency', { channel: 'anthropic-a', ttft_ms: 0, token_delay_ms: 3 });
  await gw.control('POST', '/latency', { channel: 'gemini-a', ttft_ms: 0, token_delay_ms: 3 });
  // messages: message_start, content_block_start, ping, then 3 text deltas before the cut.
  await addFault(gw, 'anthropic-a', { type: 'cut', after_chunks: 6 }, 30);
  await addFault(gw, 'gemini-a', { type: 'cut', after_chunks: 3 }, 10);

  const plans: Plan[] = [];
  for (let i = 0; i < 80; i++) {
    const abort = i % 2 === 0;
    plans.push({
      path: '/v1/chat/completions',
      body: { model: 'gpt-5.1', messages: user(`gpt request ${i}`), max_tokens: 30, stream: true, ...(i % 4 === 1 ? { stream_options: { include_usage: true } } : {}) },
      abort,
      expect: abort ? 'client_closed' : 'success',
    });
  }
  for (let i = 0; i < 60; i++) plans.push({ path: '/v1/messages', body: { model: 'claude-sonnet-4-5', max_tokens: 12, stream: true, messages: user(`claude request ${i}`) }, abort: false, expect: 'success' });
  for (let i = 0; i < 40; i++) plans.push({ path: '/v1/chat/completions', body: { model: 'gemini-2.5-flash', messages: user(`gemini request ${i}`), max_tokens: 12, stream: true }, abort: false, expect: 'success' });
  for (let i = 0; i < 20; i++) plans.push({ path: '/v1/chat/completions', body: { model: 'deepseek-v3.2', messages: user(`deepseek request ${i}`), max_tokens: 12, stream: true }, abort: false, expect: 'success' });
  t.is(plans.length, 200);

  const before = await gw.deps.wallet.balance(accountId);
  const traces = await Promise.all(plans.map((p) => run(key, p)));
  t.is(new Set(traces).size, 200);

  // Wait until every request has its row (abandoned streams settle just after the client left).
  let rows: any[] = [];
  for (const until = Date.now() + 15_000; Date.now() < until; await sleep(50)) {
    await gw.deps.usage.flush();
    rows = await gw.deps.db.Usage.find({ account_id: accountId }).lean();
    if (rows.length >= 200) break;
  }
  await sleep(200);
  await gw.deps.usage.flush();
  rows = await gw.deps.db.Usage.find({ account_id: accountId }).lean();
  t.is(rows.length, 200, 'one usage row per request');
  t.deepEqual(rows.map((r) => r.request_id).sort(), [...traces].sort());

  const byTrace = new Map(rows.map((r) => [r.request_id, r]));
  const outcome = (r: any) => (r.status === 'success' ? 'success' : r.error_code);
  // Abandoned gpt streams and clean gpt streams are known one by one.
  plans.forEach((p, i) => {
    if (p.path === '/v1/chat/completions' && (p.body.model as string) === 'gpt-5.1') t.is(outcome(byTrace.get(traces[i])), p.expect, `request ${i}`);
  });
  // The cuts land on whichever requests reached the channel first: count them.
  const tally = (model: string) => {
    const counts: Record<string, number> = {};
    for (const r of rows.filter((x) => x.model === model)) counts[outcome(r)] = (counts[outcome(r)] ?? 0) + 1;
    return counts;
  };
  t.deepEqual(tally('gpt-5.1'), { success: 40, client_closed: 40 });
  t.deepEqual(tally('claude-sonnet-4-5'), { success: 30, upstream_cut: 30 });
  t.deepEqual(tally('gemini-2.5-flash'), { success: 30, upstream_cut: 10 });
  t.deepEqual(tally('deepseek-v3.2'), { success: 20 });
  for (const r of rows) {
    t.is(r.attempts_count, 1);
    t.true(r.cost_nano > 0, `${r.request_id} ${r.status} ${r.error_code}: content was streamed, so it is billed`);
  }

  const charges = await gw.deps.db.Ledger.find({ account_id: accountId, kind: 'charge' }).lean();
  t.is(charges.length, 200, 'one charge per billed request');
  t.deepEqual(charges.map((c) => c._id).sort(), traces.map((id) => `${id}:charge`).sort());
  for (const c of charges) t.is(-c.amount_nano, byTrace.get(c.ref)!.cost_nano, `${c._id}`);
  const ledgerSum = charges.reduce((s, c) => s - c.amount_nano, 0);
  const rowSum = rows.reduce((s, r) => s + r.cost_nano, 0);
  const after = await gw.deps.wallet.balance(accountId);
  t.is(ledgerSum, rowSum);
  t.is(before - after, ledgerSum);
  // The Redis projection equals the Mongo ledger.
  t.is((await gw.deps.wallet.ledgerTotals(accountId)).balanceNano, after);
});
