import test from 'ava';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Simulator } from '../../dev/simulator/app';
import { createSimulator } from '../../dev/simulator/app';
import { ANTHROPIC_AUTH, OPENAI_AUTH, addFault, channel, control, jsonOf, parseSse, post, requests, setUsage, startSim } from './helpers';

let sim: Simulator;
let url: string;

test.before(async () => {
  ({ sim, url } = await startSim());
});
test.after.always(async () => {
  await sim?.close();
});

const openai = (ch: string) => new OpenAI({ baseURL: `${url}/ch/${ch}/v1`, apiKey: 'k', maxRetries: 0 });
const anthropic = (ch: string) => new Anthropic({ baseURL: `${url}/ch/${ch}`, apiKey: 'k', maxRetries: 0 });
const chatBody = (extra: Record<string, unknown> = {}) => ({ model: 'm', messages: [{ role: 'user', content: 'hello' }], ...extra });

// Serial: the answers' length is the whole simulator's, and serial tests finish before the others start.
test.serial('the answers\' length: long streams on request, a smaller cap still ends with length, reset back to 24', async (t) => {
  const ch = channel('c');
  t.is((await control(url, 'POST', '/_control/output', { tokens: 0 })).status, 400);
  t.is((await control(url, 'POST', '/_control/output', { tokens: 300 })).status, 200);
  try {
    const stream = await openai(ch).chat.completions.create({ ...chatBody(), stream: true, stream_options: { include_usage: true } } as any);
    let text = '';
    let usage: any = null;
    for await (const chunk of stream as any) {
      if (chunk.usage) usage = chunk.usage;
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    t.is(text.split(' ').length, 300);
    t.is(usage.completion_tokens, 300);
    const m = await anthropic(ch).messages.create({ model: 'c', max_tokens: 1000, messages: [{ role: 'user', content: 'hello' }] });
    t.is(m.usage.output_tokens, 300);
    const long = await openai(ch).chat.completions.create(chatBody() as any);
    t.is(long.usage!.completion_tokens, 300);
    const capped = await openai(ch).chat.completions.create(chatBody({ max_tokens: 10 }) as any);
    t.is(capped.choices[0].finish_reason, 'length');
    t.is(capped.usage!.completion_tokens, 10);
  } finally {
    t.is((await control(url, 'POST', '/_control/reset')).status, 200);
  }
  // The same body again: answered at the default length, not from a plan made at the other one.
  const again = await openai(ch).chat.completions.create(chatBody() as any);
  t.is(again.usage!.completion_tokens, 24);
});

test('usage override on chat completions: prompt 250000, cached, reasoning, server tools', async (t) => {
  const ch = channel('c');
  await setUsage(url, ch, { prompt_tokens: 250000, cached_tokens: 120000, reasoning_tokens: 30, server_tool_calls: 3 });
  const c = await openai(ch).chat.completions.create(chatBody() as any);
  t.deepEqual(c.usage, {
    prompt_tokens: 250000,
    completion_tokens: 24 + 30,
    total_tokens: 250054,
    prompt_tokens_details: { cached_tokens: 120000, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 30, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    num_server_side_tools_used: 3,
  } as any);

  await setUsage(url, ch, { output_tokens: 5 });
  const stream = await openai(ch).chat.completions.create({ ...chatBody(), stream: true, stream_options: { include_usage: true } } as any);
  let usage: any = null;
  let text = '';
  for await (const chunk of stream as any) {
    if (chunk.usage) usage = chunk.usage;
    text += chunk.choices[0]?.delta?.content ?? '';
  }
  t.is(usage.completion_tokens, 5);
  t.is(usage.prompt_tokens, 2); // overrides replace the whole set: prompt is computed again
  t.is(text.split(' ').length, 24); // the text does not change

  t.is((await control(url, 'DELETE', `/_control/usage?channel=${ch}`)).status, 200);
  const plain = await openai(ch).chat.completions.create(chatBody() as any);
  t.is(plain.usage!.completion_tokens, 24);
  t.is(plain.usage!.prompt_tokens_details!.cached_tokens, 0);
});

test('usage override on Anthropic: cache creation and read, streamed too', async (t) => {
  const ch = channel('c');
  await setUsage(url, ch, { prompt_tokens: 40, cache_creation_input_tokens: 1000, cache_read_input_tokens: 5000, output_tokens: 9, server_tool_calls: 2 });
  const m = await anthropic(ch).messages.create({ model: 'c', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] });
  t.is(m.usage.input_tokens, 40);
  t.is(m.usage.cache_creation_input_tokens, 1000);
  t.is(m.usage.cache_read_input_tokens, 5000);
  t.is(m.usage.output_tokens, 9);
  t.is(m.usage.server_tool_use!.web_search_requests, 2);

  const r = await post(url, `/ch/${ch}/v1/messages`, { model: 'c', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'x' }] }, ANTHROPIC_AUTH);
  const events = parseSse(await r.text()).map((e) => JSON.parse(e.data));
  t.is(events[0].message.usage.cache_read_input_tokens, 5000);
  t.is(events[0].message.usage.cache_creation_input_tokens, 1000);
  t.is(events[0].message.usage.input_tokens, 40);
  const delta = events.find((e) => e.type === 'message_delta');
  t.is(delta.usage.output_tokens, 9);
});

test('usage control validates fields', async (t) => {
  t.is((await control(url, 'POST', '/_control/usage', { channel: 'x', usage: { bogus: 1 } })).status, 400);
  t.is((await control(url, 'POST', '/_control/usage', { channel: 'x', usage: { prompt_tokens: -1 } })).status, 400);
  t.is((await control(url, 'POST', '/_control/usage', { usage: { prompt_tokens: 1 } })).status, 400);
});

test('per-channel latency: time to first token and per-token delay', async (t) => {
  const ch = channel('c');
  const l = await control(url, 'POST', '/_control/latency', { channel: ch, ttft_ms: 300, token_delay_ms: 20 });
  t.deepEqual(l.json, { ok: true, channel: ch, ttft_ms: 300, token_delay_ms: 20 });

  let t0 = Date.now();
  const r = await post(url, `/ch/${ch}/v1/chat/completions`, chatBody({ stream: true, max_tokens: 5 }), OPENAI_AUTH);
  const reader = r.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let firstContentAt = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    if (!firstContentAt && /"delta":\{"content":"\w/.test(buf)) firstContentAt = Date.now();
  }
  const total = Date.now() - t0;
  t.true(firstContentAt - t0 >= 290, `ttft ${firstContentAt - t0}`);
  t.true(total >= 300 + 4 * 20 - 10, `total ${total}`);
  t.true(buf.endsWith('data: [DONE]\n\n'));

  t0 = Date.now();
  const c = await post(url, `/ch/${ch}/v1/chat/completions`, chatBody({ max_tokens: 5 }), OPENAI_AUTH);
  t.is(c.status, 200);
  await c.text();
  t.true(Date.now() - t0 >= 300 + 5 * 20 - 10);

  // Other channels are unaffected; clearing restores speed. (Upper bounds get a
  // wide margin below a long ttft, so a loaded machine cannot fail them.)
  await control(url, 'POST', '/_control/latency', { channel: ch, ttft_ms: 3000, token_delay_ms: 0 });
  t0 = Date.now();
  await (await post(url, `/ch/${channel('c')}/v1/chat/completions`, chatBody(), OPENAI_AUTH)).text();
  t.true(Date.now() - t0 < 2000);
  await control(url, 'DELETE', `/_control/latency?channel=${ch}`);
  t0 = Date.now();
  await (await post(url, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH)).text();
  t.true(Date.now() - t0 < 2000);
});

test('global latency from options, and from the control API without a channel', async (t) => {
  const own = createSimulator({ ttftMs: 4000, tokenDelayMs: 0 });
  const base = await own.listen(0);
  try {
    let t0 = Date.now();
    await (await post(base, '/v1/chat/completions', chatBody(), OPENAI_AUTH)).text();
    t.true(Date.now() - t0 >= 3990);
    await control(base, 'POST', '/_control/latency', { ttft_ms: 0, token_delay_ms: 0 });
    t0 = Date.now();
    await (await post(base, '/v1/chat/completions', chatBody(), OPENAI_AUTH)).text();
    t.true(Date.now() - t0 < 3000, 'far below the configured 4 s: the delay is off');
    await control(base, 'POST', '/_control/reset');
    t0 = Date.now();
    await (await post(base, '/v1/chat/completions', chatBody(), OPENAI_AUTH)).text();
    t.true(Date.now() - t0 >= 3990, 'reset restores the configured defaults');
  } finally {
    await own.close();
  }
});

test('request log: last 50 per channel, all counted, selected headers, parsed body', async (t) => {
  const ch = channel('c');
  for (let i = 0; i < 55; i++) {
    const r = await post(url, `/ch/${ch}/v1/chat/completions?i=${i}`, chatBody({ metadata: { i } }), { ...OPENAI_AUTH, 'x-stainless-lang': 'js', 'idempotency-key': `k${i}` });
    await r.text();
  }
  const log = await requests(url, ch);
  t.is(log.count, 55);
  t.is(log.requests.length, 50);
  t.is(log.requests[0].body.metadata.i, 5);
  t.is(log.requests[49].body.metadata.i, 54);
  const last = log.requests[49];
  t.is(last.method, 'POST');
  t.is(last.path, '/v1/chat/completions');
  t.deepEqual(last.query, { i: '54' });
  t.is(last.channel, ch);
  t.is(last.headers.authorization, 'Bearer sk-test');
  t.is(last.headers['idempotency-key'], 'k54');
  t.is(last.headers['x-stainless-lang'], undefined);
  t.regex(last.at, /^\d{4}-\d\d-\d\dT/);

  // Unparseable bodies are kept as text; other channels are separate.
  await (await post(url, `/ch/${ch}/v1/chat/completions`, 'not json', OPENAI_AUTH)).text();
  t.is((await requests(url, ch)).requests.at(-1).body, 'not json');
  t.is((await requests(url, channel('c'))).count, 0);

  // Huge bodies (vision payloads) are kept only up to 1 MiB.
  const big = JSON.stringify(chatBody({ pad: 'x'.repeat(1_200_000) }));
  await (await post(url, `/ch/${ch}/v1/chat/completions`, big, OPENAI_AUTH)).text();
  const bigLog = (await requests(url, ch)).requests.at(-1);
  t.true(bigLog.body_truncated);
  t.is(bigLog.body.length, 1 << 20);

  await control(url, 'DELETE', `/_control/requests?channel=${ch}`);
  t.is((await requests(url, ch)).count, 0);
});

test('POST /_control/reset clears faults, usage, latency and logs', async (t) => {
  const own = createSimulator();
  const base = await own.listen(0);
  try {
    await addFault(base, 'a', { type: 'status', status: 500 });
    await setUsage(base, 'a', { prompt_tokens: 7 });
    await control(base, 'POST', '/_control/latency', { channel: 'a', ttft_ms: 3000, token_delay_ms: 0 });
    t.is((await post(base, '/ch/a/v1/chat/completions', chatBody(), OPENAI_AUTH)).status, 500);
    t.is((await control(base, 'POST', '/_control/reset')).status, 200);
    const t0 = Date.now();
    const r = await post(base, '/ch/a/v1/chat/completions', chatBody(), OPENAI_AUTH);
    t.is(r.status, 200);
    t.is((await jsonOf(r)).usage.prompt_tokens, 2);
    t.true(Date.now() - t0 < 2000);
    t.is((await requests(base, 'a')).count, 1);
    t.is((await control(base, 'GET', '/_control/nope')).status, 404);
  } finally {
    await own.close();
  }
});

test('extra handlers are tried before the 404 and see the channel context', async (t) => {
  const seen: string[] = [];
  const own = createSimulator({
    extraHandlers: [
      (req, res, ctx) => {
        if (ctx.path !== '/v1/images/generations') return false;
        seen.push(`${ctx.channel} ${ctx.path} ${ctx.url.searchParams.get('q')}`);
        res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
        return true;
      },
      async (req, res, ctx) => {
        if (!ctx.path.startsWith('/_control/media')) return false;
        res.writeHead(200).end('media control');
        return true;
      },
    ],
  });
  const base = await own.listen(0);
  try {
    const r = await post(base, '/ch/img-1/v1/images/generations?q=1', {});
    t.is(r.status, 201);
    t.deepEqual(seen, ['img-1 /v1/images/generations 1']);
    t.is(await (await fetch(`${base}/_control/media/tasks`)).text(), 'media control');
    t.is((await post(base, '/ch/img-1/v1/other', {})).status, 404);
    // Chat routes still win over extra handlers.
    t.is((await post(base, '/ch/img-1/v1/chat/completions', chatBody(), OPENAI_AUTH)).status, 200);
  } finally {
    await own.close();
  }
});

test('server.ts: reads the env, logs one JSON line, exits cleanly on SIGTERM', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'dev/simulator/server.ts'], {
    env: { ...process.env, SIMULATOR_PORT: '0', SIMULATOR_HOST: '127.0.0.1', SIM_TTFT_MS: '0', SIM_TOKEN_DELAY_MS: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  const log = JSON.parse(first);
  t.is(log.msg, 'simulator listening');
  t.regex(log.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const r = await post(log.url, '/v1/chat/completions', chatBody(), OPENAI_AUTH);
  t.is(r.status, 200);
  await r.text();
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  t.is(await exit, 0);
});
