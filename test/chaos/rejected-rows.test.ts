import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { startGateway, type TestGateway } from '../helpers/stack';
import { startBlipProxy, type BlipProxy } from '../helpers/blip-proxy';
import { post } from '../chat/helpers';
import { freePort } from '../../dev/scripts/lib/proc';

/**
 * Every public call ends in exactly one usage row, rejected ones included
 * (spec 1 section 3), also when the gateway that answered dies right after:
 * the chaos run found a 429 on `streamGenerateContent` with no row. Here a
 * gateway answers a 429 (the account's rate limit, or the upstream's 429
 * passed on) while the store is unreachable, so the row cannot reach Mongo
 * from that process, and is then SIGKILLed: the row must be found once the
 * store is back, written by another process from the ledger journal.
 */
let gw: TestGateway;
let proxy: BlipProxy;
test.before(async () => {
  gw = await startGateway({}, { simulator: true });
  const base = new URL(process.env.MONGO_URL!);
  proxy = await startBlipProxy({ host: base.hostname, port: Number(base.port) });
});
test.after.always(async () => {
  proxy?.up();
  await gw?.close();
  await proxy?.close();
});

/** A second gateway process on the same Redis and database, whose store is reached through the proxy. */
async function childGateway(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const c = gw.config;
  const db = new URL(c.MONGO_URL).pathname;
  const child = spawn(process.execPath, ['--import', 'tsx', 'gateway/server.ts'], {
    env: {
      ...process.env,
      PORT: String(port), MONGO_URL: proxy.url('mongodb', db), REDIS_URL: c.REDIS_URL, REDIS_PREFIX: c.REDIS_PREFIX,
      TEMPORAL_ADDRESS: c.TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE: c.TEMPORAL_TASK_QUEUE, ADMIN_TOKEN: c.ADMIN_TOKEN,
      KEY_ENCRYPTION_KEY: c.KEY_ENCRYPTION_KEY, SIMULATOR_URL: c.SIMULATOR_URL, LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      const r = await fetch(`${url}/v1/models`);
      await r.body?.cancel();
      return { url, child };
    } catch {
      if (Date.now() > until) throw new Error('the child gateway did not start');
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

async function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exit;
}

/** The call's usage row, once the journal (another process's entries taken over after their idle time) is drained. */
async function rowOf(trace: string) {
  const until = Date.now() + 60_000;
  for (;;) {
    await gw.deps.usage.flush();
    const row = await gw.deps.db.Usage.findById(trace).lean();
    if (row || Date.now() > until) return row;
    await new Promise((r) => setTimeout(r, 500));
  }
}

const stream = '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse';
const ask = (text: string) => ({ contents: [{ role: 'user', parts: [{ text }] }], generationConfig: { maxOutputTokens: 8 } });

const cases = [
  {
    name: "the upstream's 429, passed on",
    async arrange(_accountId: string) {
      for (const channel of ['gemini-a', 'gemini-b']) {
        const r = await gw.control('POST', '/faults', { channel, fault: { type: 'status', status: 429 }, times: 1 });
        if (!r?.ok) throw new Error(`fault not set: ${JSON.stringify(r)}`);
      }
      return 0;
    },
  },
  {
    name: 'the account rate limit',
    async arrange(accountId: string) {
      const r = await gw.admin('PATCH', `/accounts/${accountId}`, { rate_limit: { rpm: 1 } });
      if (r.status !== 200) throw new Error(`limit not set: ${JSON.stringify(r.body)}`);
      return 1; // the first call of the minute goes through
    },
  },
];

for (const c of cases) {
  test.serial(`a 429 on streamGenerateContent (${c.name}) keeps its usage row when its gateway dies right after`, async (t) => {
    t.timeout(180_000);
    const a = await gw.newAccount();
    const key = (await gw.newKey(a.id)).key;
    const allowed = await c.arrange(a.id);
    const { url, child } = await childGateway();
    try {
      const child$ = { url } as TestGateway;
      for (let i = 0; i < allowed; i++) t.is((await post(child$, stream, ask(`first ${i}`), { key })).status, 200);
      proxy.down();
      const r = await post(child$, stream, ask('refused'), { key });
      t.is(r.status, 429, r.text);
      t.truthy(r.trace);
      await killed(child);
      proxy.up();
      const row = await rowOf(r.trace);
      t.truthy(row, 'the rejected call has its usage row');
      t.is(row?.status, 'rejected');
      t.is(row?.error_code, 'rate_limit_exceeded');
      t.is(row?.cost_nano, 0);
      t.is(row?.endpoint, 'generate-content');
      t.is(await gw.deps.db.Usage.countDocuments({ _id: r.trace }), 1);
    } finally {
      proxy.up();
      await killed(child);
      await gw.control('DELETE', '/faults');
    }
  });
}
