import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { startGateway, type TestGateway } from '../helpers/stack';
import { startBlipProxy } from '../helpers/blip-proxy';
import { post, sseEvents } from '../chat/helpers';
import { freePort } from '../../dev/scripts/lib/proc';
import { chatCharge } from '../../domain/pricing';

/**
 * A chat charge is durable before the answer's last byte leaves the gateway:
 * a gateway SIGKILLed right after answering, or in the middle of draining the
 * journal to the ledger, still leaves exactly one charge; a Redis or store
 * outage of a few seconds during settlement leaves the right charge, not 0.
 */

function startChildGateway(gw: TestGateway, port: number, failpoints: string): ChildProcess {
  const c = gw.config;
  const env = {
    ...process.env,
    PORT: String(port), MONGO_URL: c.MONGO_URL, REDIS_URL: c.REDIS_URL, REDIS_PREFIX: c.REDIS_PREFIX,
    TEMPORAL_ADDRESS: c.TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE: c.TEMPORAL_TASK_QUEUE, ADMIN_TOKEN: c.ADMIN_TOKEN,
    KEY_ENCRYPTION_KEY: c.KEY_ENCRYPTION_KEY, SIMULATOR_URL: c.SIMULATOR_URL, LOG_LEVEL: 'warn', FAILPOINTS: failpoints,
  };
  return spawn(process.execPath, ['--import', 'tsx', 'gateway/server.ts'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
}

async function listening(url: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      const r = await fetch(`${url}/v1/models`);
      await r.body?.cancel();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`${url} did not start`);
}

function exited(p: ChildProcess, timeoutMs: number): Promise<NodeJS.Signals | number | null> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve(p.signalCode ?? p.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('gateway did not exit in time')), timeoutMs);
    p.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(signal ?? code);
    });
  });
}

/** Everything the surviving gateway sees for one request once the journal is drained: ledger rows, usage row, balance. */
async function settled(gw: TestGateway, trace: string, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    await gw.deps.usage.flush();
    const charges = await gw.deps.db.Ledger.find({ ref: trace }).lean();
    const row = await gw.deps.db.Usage.findById(trace).lean();
    const pending = await gw.deps.wallet.journal.pending();
    if ((charges.length > 0 && row && pending === 0) || Date.now() > until) return { charges, row, pending };
    await new Promise((r) => setTimeout(r, 200));
  }
}

function expectedCost(gw: TestGateway, modelId: string, inputTokens: number, outputTokens: number): number {
  const model = gw.deps.catalogue().models.find((m) => m.id === modelId)!;
  return chatCharge(model, gw.deps.catalogue().pricingRules, { inputTokens, outputTokens, cachedTokens: 0, cacheWriteTokens: 0, serverToolCalls: 0 }).costNano;
}

const crashes = [
  { failpoint: 'chat.answered', stream: false },
  { failpoint: 'chat.answered', stream: true },
  // The dying gateway wrote the rows but never acknowledged them: another one takes the entries over
  // (after the claim idle time) and writes them again, which must be a no-op.
  { failpoint: 'journal.before-ack', stream: false },
];

for (const c of crashes) {
  test.serial(`a gateway SIGKILLed at ${c.failpoint} (${c.stream ? 'stream' : 'json'}) leaves exactly one charge`, async (t) => {
    t.timeout(180_000);
    const gw = await startGateway({}, { simulator: true });
    const port = await freePort();
    const child = startChildGateway(gw, port, c.failpoint);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    try {
      const a = await gw.newAccount();
      const key = (await gw.newKey(a.id)).key;
      const before = await gw.deps.wallet.balance(a.id);
      const childGw = { url: `http://127.0.0.1:${port}` } as TestGateway;
      await listening(childGw.url);
      // For the drain failpoint the child must be the one that drains: this gateway stays out until it died.
      if (c.failpoint === 'journal.before-ack') await gw.deps.wallet.journal.stop();
      const r = await post(childGw, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 20, stream: c.stream, messages: [{ role: 'user', content: 'crash after answering' }] }, { key, headers: { 'anthropic-version': '2023-06-01' } });
      t.is(r.status, 200, r.text);
      let usage: { input_tokens: number; output_tokens: number };
      if (c.stream) {
        const events = sseEvents(r.text);
        t.is(events.at(-1)?.event, 'message_stop', 'the client got the whole stream');
        const start = JSON.parse(events.find((e) => e.event === 'message_start')!.data).message.usage;
        const delta = JSON.parse(events.filter((e) => e.event === 'message_delta').at(-1)!.data).usage;
        usage = { input_tokens: start.input_tokens, output_tokens: delta.output_tokens };
      } else {
        usage = r.json.usage;
      }
      t.is(await exited(child, 60_000), 'SIGKILL', stderr);
      gw.deps.wallet.journal.start();
      const cost = expectedCost(gw, 'claude-sonnet-4-5', usage.input_tokens, usage.output_tokens);
      t.true(cost > 0);

      const s = await settled(gw, r.trace);
      t.is(s.pending, 0, 'the journal is drained');
      t.is(s.charges.length, 1, 'one ledger row');
      t.is(s.charges[0]._id, `${r.trace}:charge`);
      t.is(s.charges[0].amount_nano, -cost);
      t.is(s.row?.cost_nano, cost);
      t.is(s.row?.status, 'success');
      t.is(await gw.deps.db.Usage.countDocuments({ account_id: a.id }), 1, 'one usage row');
      t.is(await gw.deps.wallet.balance(a.id), before - cost, 'the projection moved once');
      const totals = await gw.deps.wallet.ledgerTotals(a.id);
      t.is(totals.balanceNano, before - cost, 'the ledger agrees');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await gw.close();
    }
  });
}

test.serial('a Redis outage of a few seconds during settlement leaves the right charge, once', async (t) => {
  t.timeout(120_000);
  const target = new URL(process.env.REDIS_URL!);
  const proxy = await startBlipProxy({ host: target.hostname, port: Number(target.port) });
  const gw = await startGateway({ REDIS_URL: proxy.url('redis') }, { simulator: true });
  try {
    const a = await gw.newAccount();
    const key = (await gw.newKey(a.id)).key;
    const before = await gw.deps.wallet.balance(a.id);
    // The upstream answers after 1.5 s; Redis goes away 0.5 s into the call and stays away 4 s.
    await gw.control('POST', '/latency', { channel: 'openai-a', ttft_ms: 1500, token_delay_ms: 0 });
    const call = post(gw, '/v1/chat/completions', { model: 'gpt-5.1', max_tokens: 10, messages: [{ role: 'user', content: 'redis blip' }] }, { key });
    await new Promise((r) => setTimeout(r, 500));
    const blip = proxy.blip(4000);
    const r = await call;
    t.is(r.status, 200, r.text);
    await blip;
    const cost = expectedCost(gw, 'gpt-5.1', r.json.usage.prompt_tokens, r.json.usage.completion_tokens);
    const s = await settled(gw, r.trace);
    t.is(s.charges.length, 1);
    t.is(s.charges[0].amount_nano, -cost, 'charged in full, not 0');
    t.is(s.row?.cost_nano, cost);
    t.is(await gw.deps.wallet.balance(a.id), before - cost);
    t.is((await gw.deps.wallet.ledgerTotals(a.id)).balanceNano, before - cost);
  } finally {
    await gw.close();
    await proxy.close();
  }
});

test.serial('a store outage of a few seconds leaves the charges in the journal until it is back, then writes each once', async (t) => {
  t.timeout(180_000);
  const base = new URL(process.env.MONGO_URL!);
  const proxy = await startBlipProxy({ host: base.hostname, port: Number(base.port) });
  const db = `t_blip_${Date.now().toString(36)}`;
  const gw = await startGateway({ MONGO_URL: proxy.url('mongodb', `/${db}`) }, { simulator: true });
  try {
    const a = await gw.newAccount();
    const key = (await gw.newKey(a.id)).key;
    const before = await gw.deps.wallet.balance(a.id);
    proxy.down();
    // Chat needs no store on its hot path: auth and the wallet live in Redis, the charge goes to the journal.
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(gw, '/v1/chat/completions', { model: 'gpt-5.1', max_tokens: 8, messages: [{ role: 'user', content: `store blip ${i}` }] }, { key })),
    );
    for (const r of replies) t.is(r.status, 200, r.text);
    t.true((await gw.deps.wallet.journal.pending()) > 0, 'charges wait in the journal while the store is down');
    await new Promise((r) => setTimeout(r, 3000));
    proxy.up();
    let expected = 0;
    for (const r of replies) {
      const cost = expectedCost(gw, 'gpt-5.1', r.json.usage.prompt_tokens, r.json.usage.completion_tokens);
      expected += cost;
      const s = await settled(gw, r.trace, 60_000);
      t.is(s.charges.length, 1);
      t.is(s.charges[0].amount_nano, -cost);
      t.is(s.row?.cost_nano, cost);
    }
    t.is(await gw.deps.db.Ledger.countDocuments({ account_id: a.id, kind: 'charge' }), 20);
    t.is(await gw.deps.wallet.balance(a.id), before - expected);
    t.is((await gw.deps.wallet.ledgerTotals(a.id)).balanceNano, before - expected);
  } finally {
    proxy.up();
    await gw.close();
    await proxy.close();
  }
});
