/**
 * A stream's last event (the client's sign that it is complete: `[DONE]`,
 * message_stop) leaves the gateway only after the charge is written ahead;
 * everything before it goes out as it arrives, also when the upstream sent
 * the whole stream in one chunk (the simulator does, with no token delay).
 * Shown with a gateway SIGKILLed the moment a stream's settlement starts
 * (FAILPOINTS=chat.stream-settling): the client already holds the content
 * and never the end, and no charge exists.
 */
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'undici';
import { startGateway, type TestGateway } from '../helpers/stack';
import { sseEvents, user } from './helpers';
import { freePort } from '../../dev/scripts/lib/proc';

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { simulator: true });
});
test.after.always(async () => {
  await gw?.close();
});

function startChild(port: number): ChildProcess {
  const c = gw.config;
  const env = {
    ...process.env,
    PORT: String(port), MONGO_URL: c.MONGO_URL, REDIS_URL: c.REDIS_URL, REDIS_PREFIX: c.REDIS_PREFIX,
    TEMPORAL_ADDRESS: c.TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE: c.TEMPORAL_TASK_QUEUE, ADMIN_TOKEN: c.ADMIN_TOKEN,
    KEY_ENCRYPTION_KEY: c.KEY_ENCRYPTION_KEY, SIMULATOR_URL: c.SIMULATOR_URL, LOG_LEVEL: 'warn', FAILPOINTS: 'chat.stream-settling',
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

/** What the client received before the connection broke (or ended). */
async function received(url: string, path: string, key: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const res = await request(url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of res.body) chunks.push(chunk as Buffer);
  } catch {
    // the gateway died: what arrived is what counts
  }
  return { status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') };
}

const cases: Array<{ name: string; path: string; body: unknown; headers: Record<string, string>; content: (e: { event?: string; data: string }[]) => string; end: (e: { event?: string; data: string }[]) => boolean }> = [
  {
    name: 'chat-completions (passthrough, usage asked for)',
    path: '/v1/chat/completions',
    body: { model: 'gpt-5.1', messages: user('four words please'), max_tokens: 4, stream: true, stream_options: { include_usage: true } },
    headers: {},
    content: (events: { event?: string; data: string }[]) => events.map((e) => JSON.parse(e.data).choices?.[0]?.delta?.content ?? '').join(''),
    end: (events: { event?: string; data: string }[]) => events.some((e) => e.data === '[DONE]'),
  },
  {
    name: 'messages (passthrough)',
    path: '/v1/messages',
    body: { model: 'claude-sonnet-4-5', messages: user('four words please'), max_tokens: 4, stream: true },
    headers: { 'anthropic-version': '2023-06-01' },
    content: (events: { event?: string; data: string }[]) => events.filter((e) => e.event === 'content_block_delta').map((e) => JSON.parse(e.data).delta.text).join(''),
    end: (events: { event?: string; data: string }[]) => events.some((e) => e.event === 'message_stop'),
  },
  {
    name: 'chat-completions without usage (reframed: the usage chunk is dropped)',
    path: '/v1/chat/completions',
    body: { model: 'gpt-5.1', messages: user('four words please'), max_tokens: 4, stream: true },
    headers: {},
    content: (events: { event?: string; data: string }[]) => events.map((e) => JSON.parse(e.data).choices?.[0]?.delta?.content ?? '').join(''),
    end: (events: { event?: string; data: string }[]) => events.some((e) => e.data === '[DONE]'),
  },
];

for (const c of cases) {
  test.serial(`${c.name}: the content is out before the charge, the end is not`, async (t) => {
    t.timeout(120_000);
    const port = await freePort();
    const child = startChild(port);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const gone = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
    try {
      const url = `http://127.0.0.1:${port}`;
      await listening(url);
      const a = await gw.newAccount();
      const key = (await gw.newKey(a.id)).key;
      const before = await gw.deps.wallet.balance(a.id);
      const r = await received(url, c.path, key, c.body, c.headers);
      t.is(r.status, 200);
      t.is(await gone, 'SIGKILL', stderr);
      const events = sseEvents(r.text);
      t.true(c.content(events).trim().split(/\s+/).length >= 1, r.text);
      t.false(c.end(events), r.text);
      // The gateway died before the charge: the balance is untouched, and the client never saw the stream end.
      t.is(await gw.deps.wallet.balance(a.id), before);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
}
