// Raw byte-level checks of each vendor's stream framing (no SDK in between).
import test from 'ava';
import type { Simulator } from '../../dev/simulator/app';
import { ANTHROPIC_AUTH, GEMINI_AUTH, OPENAI_AUTH, channel, post, startSim } from './helpers';

let sim: Simulator;
let url: string;

test.before(async () => {
  ({ sim, url } = await startSim());
});
test.after.always(async () => {
  await sim?.close();
});

test('OpenAI chat: only "data: <json>\\n\\n" frames, ending with data: [DONE]', async (t) => {
  const r = await post(url, `/ch/${channel('s')}/v1/chat/completions`, { model: 'm', stream: true, stream_options: { include_usage: true }, max_tokens: 3, messages: [{ role: 'user', content: 'hi' }] }, OPENAI_AUTH);
  t.is(r.status, 200);
  t.is(r.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  t.is(r.headers.get('cache-control'), 'no-cache');
  const body = await r.text();
  t.true(body.endsWith('\n\ndata: [DONE]\n\n'));
  const frames = body.split('\n\n');
  t.is(frames.pop(), '');
  t.is(frames.length, 1 + 3 + 1 + 1 + 1);
  for (const f of frames) t.regex(f, /^data: [^\n]+$/);
  const json = frames.slice(0, -1).map((f) => JSON.parse(f.slice(6)));
  t.true(json.every((c) => c.object === 'chat.completion.chunk' && c.id === json[0].id && c.created === json[0].created));
  t.deepEqual(json[0].choices[0].delta, { role: 'assistant', content: '', refusal: null });
  t.is(json[4].choices[0].finish_reason, 'length');
  t.deepEqual(json[4].choices[0].delta, {});
  t.deepEqual(json[5].choices, []);
  t.is(json[5].usage.total_tokens, json[5].usage.prompt_tokens + 3);
  t.true(json.slice(0, 5).every((c) => c.usage === null));
});

test('Anthropic: every frame is "event: X\\ndata: {...}\\n\\n"', async (t) => {
  const r = await post(url, `/ch/${channel('s')}/v1/messages`, { model: 'c', stream: true, max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] }, ANTHROPIC_AUTH);
  const body = await r.text();
  const frames = body.split('\n\n');
  t.is(frames.pop(), '');
  for (const f of frames) {
    const m = /^event: ([a-z_]+)\ndata: (\{.*\})$/.exec(f);
    t.truthy(m, f);
    t.is(JSON.parse(m![2]).type, m![1]);
  }
  t.is(frames.at(-1), 'event: message_stop\ndata: {"type":"message_stop"}');
});

test('Responses: event/data pairs, sequence_number 0..n-1', async (t) => {
  const r = await post(url, `/ch/${channel('s')}/v1/responses`, { model: 'gpt-5', stream: true, input: [{ role: 'user', content: 'hi' }] }, OPENAI_AUTH);
  const frames = (await r.text()).split('\n\n');
  t.is(frames.pop(), '');
  frames.forEach((f, i) => {
    const m = /^event: (response\.[a-z_.]+)\ndata: (\{.*\})$/.exec(f);
    t.truthy(m, f);
    const d = JSON.parse(m![2]);
    t.is(d.type, m![1]);
    t.is(d.sequence_number, i);
  });
});

test('Gemini alt=sse: "data: {...}\\r\\n\\r\\n" frames, no [DONE]', async (t) => {
  const r = await post(url, `/ch/${channel('s')}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 3 } }, GEMINI_AUTH);
  t.regex(r.headers.get('content-type')!, /^text\/event-stream/);
  const frames = (await r.text()).split('\r\n\r\n');
  t.is(frames.pop(), '');
  t.is(frames.length, 3);
  const json = frames.map((f) => {
    t.regex(f, /^data: \{[^\r\n]*\}$/);
    return JSON.parse(f.slice(6));
  });
  t.true(json.every((j) => j.candidates[0].content.role === 'model' && j.responseId === json[0].responseId));
  t.is(json[2].candidates[0].finishReason, 'MAX_TOKENS');
  t.is(json[2].usageMetadata.candidatesTokenCount, 3);
});

test('streams use chunked transfer encoding, with or without latency', async (t) => {
  const ch = channel('s');
  const fast = await post(url, `/ch/${ch}/v1/chat/completions`, { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }, OPENAI_AUTH);
  t.is(fast.headers.get('transfer-encoding'), 'chunked');
  t.is(fast.headers.get('content-length'), null);
  t.true((await fast.text()).endsWith('data: [DONE]\n\n'));
  await fetch(`${url}/_control/latency`, { method: 'POST', body: JSON.stringify({ channel: ch, ttft_ms: 1, token_delay_ms: 1 }) });
  const slow = await post(url, `/ch/${ch}/v1/chat/completions`, { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }, OPENAI_AUTH);
  t.is(slow.headers.get('transfer-encoding'), 'chunked');
  t.true((await slow.text()).endsWith('data: [DONE]\n\n'));
});
