// SIGTERM on real processes (gateway/server.ts, workers/main.ts), as a deploy sends it:
// - a gateway stops accepting connections, lets an in-flight stream finish (up to
//   SHUTDOWN_GRACE_MS), writes its charge to the ledger (the journal drained by the
//   gateway itself: nothing else drains it here), then exits 0; a stream longer than the
//   grace is closed at the deadline and still billed;
// - a worker stops polling and finishes the activity it is running (shutdownGraceTime):
//   a task whose vendor answers slowly is settled before the worker exits.
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../dev/scripts/lib/proc';
import { startGateway, testConfig, type TestGateway } from '../helpers/stack';
import { connectStore, type Db } from '../../capabilities/store';
import { readCatalogueFile, seedCatalogue } from '../../capabilities/catalogue/records';
import { createSimulator, type Simulator } from '../../dev/simulator/app';
import type { Config } from '../../platform/config';

const children: ChildProcess[] = [];
let sim: Simulator;
let simUrl: string;
const dbs: Db[] = [];

test.before(async () => {
  sim = createSimulator({ ttftMs: 0, tokenDelayMs: 0 });
  simUrl = await sim.listen(0, '127.0.0.1');
});

test.after.always(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const db of dbs) {
    await db.conn.dropDatabase().catch(() => undefined);
    await db.conn.close();
  }
  await sim?.close();
});

function envOf(config: Config, extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...process.env,
    MONGO_URL: config.MONGO_URL, REDIS_URL: config.REDIS_URL, REDIS_PREFIX: config.REDIS_PREFIX, TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
    TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE, ADMIN_TOKEN: config.ADMIN_TOKEN, KEY_ENCRYPTION_KEY: config.KEY_ENCRYPTION_KEY,
    LOG_LEVEL: 'info', HOST: '127.0.0.1', ...extra,
  };
}

interface Proc {
  child: ChildProcess;
  exited: Promise<number | null>;
  log(): string;
}

function start(entry: string, env: NodeJS.ProcessEnv): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, exited, log: () => out };
}

async function startGatewayProcess(graceMs: number) {
  const config = testConfig({ SIMULATOR_URL: simUrl });
  const db = await connectStore(config.MONGO_URL);
  dbs.push(db);
  await seedCatalogue(db, readCatalogueFile(config.CATALOGUE_FILE));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const gw = start('gateway/server.ts', envOf(config, { SIMULATOR_URL: simUrl, PORT: String(port), SHUTDOWN_GRACE_MS: String(graceMs) }));
  for (let i = 0; ; i++) {
    if ((await fetch(`${url}/healthz`).then((r) => r.status, () => 0)) === 200) break;
    if (i > 600 || gw.child.exitCode !== null) throw new Error(`gateway did not start:\n${gw.log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const admin = async (path: string, body: unknown) => {
    const r = await fetch(`${url}/admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${config.ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return (await r.json()) as any;
  };
  const account = await admin('/accounts', { name: 'drain' });
  const { key } = await admin(`/accounts/${account.id}/keys`, { name: 'k' });
  return { config, db, url, gw, accountId: account.id as string, key: key as string };
}

/** A streamed chat call of `tokens` tokens; resolves once its first bytes arrived, with the rest of the body to come. */
async function openStream(url: string, key: string, tokens: number) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5-mini', stream: true, max_tokens: tokens, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'a long answer please' }] }),
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value);
  const rest = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return { text, error: null as string | null };
        text += decoder.decode(value);
      }
    } catch (err) {
      return { text, error: String(err) };
    }
  })();
  return { status: res.status, requestId: res.headers.get('x-gateway-trace')!, rest };
}

test.serial('gateway SIGTERM: no new connections, the in-flight stream finishes and is charged, the journal is drained, exit 0', async (t) => {
  await fetch(`${simUrl}/_control/latency`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ttft_ms: 0, token_delay_ms: 150 }) });
  const { db, url, gw, accountId, key } = await startGatewayProcess(20_000);
  const stream = await openStream(url, key, 24); // the simulator's 24 tokens: 3.6 s
  t.is(stream.status, 200);
  const sentAt = Date.now();
  gw.child.kill('SIGTERM');
  // The listener closes at once: a new connection is refused while the stream goes on.
  let refused = false;
  for (let i = 0; i < 50 && !refused; i++) {
    refused = await fetch(`${url}/healthz`).then(() => false, () => true);
    if (!refused) await new Promise((r) => setTimeout(r, 20));
  }
  t.true(refused, 'a new connection was still accepted after SIGTERM');
  const { text, error } = await stream.rest;
  t.is(error, null);
  t.true(text.includes('data: [DONE]'), 'the stream ran to its end');
  t.true(Date.now() - sentAt > 1_000, 'the stream was still running when the signal came');
  t.is(await gw.exited, 0, gw.log());
  t.regex(gw.log(), /gateway stopped/);
  // Only the gateway drained its journal: the charge and the usage row are in the store once it exited.
  const charge = await db.Ledger.findById(`${stream.requestId}:charge`).lean();
  t.truthy(charge, 'the charge is in the ledger');
  t.true(charge!.amount_nano < 0);
  t.is(charge!.account_id, accountId);
  const usage = await db.Usage.findById(stream.requestId).lean();
  t.is(usage?.status, 'success');
  t.is(await db.Ledger.countDocuments({ account_id: accountId, kind: 'charge' }), 1);
});

test.serial('gateway SIGTERM: a stream longer than SHUTDOWN_GRACE_MS is closed at the deadline and still billed once', async (t) => {
  await fetch(`${simUrl}/_control/latency`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ttft_ms: 0, token_delay_ms: 400 }) });
  const { db, url, gw, accountId, key } = await startGatewayProcess(1_000);
  const stream = await openStream(url, key, 24); // 9.6 s against a 1 s grace
  gw.child.kill('SIGTERM');
  const { text } = await stream.rest;
  t.false(text.includes('data: [DONE]'), 'the stream was cut');
  t.is(await gw.exited, 0, gw.log());
  t.regex(gw.log(), /grace over/);
  const usage = await db.Usage.findById(stream.requestId).lean();
  t.truthy(usage, 'the cut call has its usage row');
  t.true((usage?.cost_nano ?? 0) > 0, 'billed for what was streamed');
  t.is(await db.Ledger.countDocuments({ account_id: accountId, kind: 'charge' }), 1);
});

test.serial('worker SIGTERM: polling stops, the running task is finished and settled before the worker exits', async (t) => {
  // The gateway in-process (no worker of its own); the worker a real process on the same task queue.
  const gw: TestGateway = await startGateway({ SHUTDOWN_GRACE_MS: '20000' }, { simulator: true, mediaDelayMs: 0 });
  try {
    const worker = start('workers/main.ts', envOf(gw.config, { SIMULATOR_URL: gw.simUrl!, SHUTDOWN_GRACE_MS: '20000' }));
    for (let i = 0; !worker.log().includes('worker started'); i++) {
      if (i > 1200 || worker.child.exitCode !== null) throw new Error(`worker did not start:\n${worker.log()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const a = await gw.newAccount();
    const { key } = await gw.newKey(a.id);
    // The vendor takes 3 s to answer the (sync) image call the worker's activity makes.
    for (const channel of ['openai-images-a', 'openai-images-b', 'openai-images-c']) await gw.control('POST', '/media/faults', { channel, fault: { type: 'delay', ms: 3_000 } });
    const answer = fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-image-1', prompt: 'a slow fox' }),
    });
    // Once the vendor has the call, the worker is told to stop.
    for (let i = 0; ; i++) {
      const r = await gw.control('GET', '/media/tasks?channel=openai-images-a');
      if ((r.tasks as unknown[]).length + (r.rejected as unknown[]).length > 0) break;
      if (i > 300) throw new Error('the vendor never got the call');
      await new Promise((r2) => setTimeout(r2, 50));
    }
    const signalled = Date.now();
    worker.child.kill('SIGTERM');
    const res = await answer;
    t.is(res.status, 200, await res.clone().text());
    t.is(await worker.exited, 0, worker.log());
    t.true(Date.now() - signalled > 1_000, 'the worker waited for the running activity');
    const task = await gw.deps.db.Task.findOne({ account_id: a.id }).lean();
    t.is(task?.state, 'succeeded');
    t.true((task?.cost_nano ?? 0) > 0);
    t.regex(worker.log(), /worker stopped/);
  } finally {
    await gw.control('DELETE', '/media/faults').catch(() => undefined);
    await gw.close();
  }
});
