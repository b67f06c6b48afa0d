import test from 'ava';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import type { Simulator } from '../../dev/simulator/app';
import { createSimulator } from '../../dev/simulator/app';
import { ANTHROPIC_AUTH, OPENAI_AUTH, addFault, channel, control, jsonOf, parseSse, post, requests, startSim } from './helpers';

let sim: Simulator;
let url: string;

test.before(async () => {
  ({ sim, url } = await startSim());
});
test.after.always(async () => {
  await sim?.close();
});

const openai = (ch: string, maxRetries = 0, base = url) => new OpenAI({ baseURL: `${base}/ch/${ch}/v1`, apiKey: 'k', maxRetries });
const anthropic = (ch: string) => new Anthropic({ baseURL: `${url}/ch/${ch}`, apiKey: 'k', maxRetries: 0 });
const chatBody = (extra: Record<string, unknown> = {}) => ({ model: 'm', messages: [{ role: 'user', content: 'hello' }], ...extra });

/** Read a body until it ends or fails; returns what arrived. */
async function readAll(r: Response): Promise<{ text: string; error: unknown }> {
  const reader = r.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, error: null };
      text += dec.decode(value, { stream: true });
    }
  } catch (error) {
    return { text, error };
  }
}

test('status 500 for the next request only: the SDK retry then succeeds', async (t) => {
  const ch = channel('f');
  await addFault(url, ch, { type: 'status', status: 500, headers: { 'retry-after-ms': '1' } }, 1);
  const c = await openai(ch, 2).chat.completions.create(chatBody() as any);
  t.is(c.object, 'chat.completion');
  const log = await requests(url, ch);
  t.is(log.count, 2);
});

test('status fault bodies follow the vendor of the route', async (t) => {
  const ch = channel('f');
  await addFault(url, ch, { type: 'status', status: 503 }, 3);
  const e1 = await t.throwsAsync(openai(ch).chat.completions.create(chatBody() as any));
  t.true(e1 instanceof OpenAI.InternalServerError);
  t.is((e1 as InstanceType<typeof OpenAI.APIError>).status, 503);
  t.is((e1 as any).error.type, 'server_error');

  const e2 = await t.throwsAsync(anthropic(ch).messages.create({ model: 'c', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }));
  t.true(e2 instanceof Anthropic.InternalServerError);
  t.is((e2 as any).error.error.type, 'overloaded_error');

  const gem = new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: `${url}/ch/${ch}` } });
  const e3 = await t.throwsAsync(gem.models.generateContent({ model: 'gemini-2.0-flash', contents: 'x' }));
  t.true(e3 instanceof ApiError);
  t.is((e3 as ApiError).status, 503);
  t.regex((e3 as ApiError).message, /UNAVAILABLE/);

  // Used up: the fourth request succeeds.
  t.is((await post(url, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH)).status, 200);
});

test('429 with and without rate-limit headers; custom body and content type', async (t) => {
  const ch = channel('f');
  await addFault(
    url,
    ch,
    { type: 'status', status: 429, headers: { 'Retry-After': '7', 'x-ratelimit-limit-requests': '60', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '7s' } },
    1,
  );
  await addFault(url, ch, { type: 'status', status: 429 }, 1);
  await addFault(url, ch, { type: 'status', status: 502, body: '<html>Bad Gateway</html>', headers: { 'content-type': 'text/html' } }, 1);
  await addFault(url, ch, { type: 'status', status: 400, body: { error: { message: 'custom', type: 'invalid_request_error', param: null, code: 'x' } } }, 1);

  let r = await post(url, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH);
  t.is(r.status, 429);
  t.is(r.headers.get('retry-after'), '7');
  t.is(r.headers.get('x-ratelimit-remaining-requests'), '0');
  t.is((await jsonOf(r)).error.code, 'rate_limit_exceeded');

  r = await post(url, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH);
  t.is(r.status, 429);
  t.is(r.headers.get('retry-after'), null);
  t.is(r.headers.get('x-ratelimit-limit-requests'), null);

  r = await post(url, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH);
  t.is(r.status, 502);
  t.is(r.headers.get('content-type'), 'text/html');
  t.is(await r.text(), '<html>Bad Gateway</html>');

  r = await post(url, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH);
  t.is(r.status, 400);
  t.is((await jsonOf(r)).error.message, 'custom');

  t.is((await post(url, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH)).status, 200);
});

test('faults queue per channel, apply only to their channel, and clear', async (t) => {
  const ch = channel('f');
  const other = channel('f');
  await addFault(url, ch, { type: 'status', status: 500 }, 2);
  await addFault(url, ch, { type: 'status', status: 504 }, 1);
  const listed = await control(url, 'GET', `/_control/faults?channel=${ch}`);
  t.deepEqual(listed.json.faults[ch].map((f: any) => [f.fault.status, f.remaining]), [[500, 2], [504, 1]]);

  t.is((await post(url, `/ch/${other}/v1/chat/completions`, chatBody(), OPENAI_AUTH)).status, 200);
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await post(url, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH)).status);
  t.deepEqual(statuses, [500, 500, 504, 200]);

  await addFault(url, ch, { type: 'status', status: 500 }); // until cleared
  t.is((await post(url, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH)).status, 500);
  t.is((await post(url, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH)).status, 500);
  t.is((await control(url, 'DELETE', `/_control/faults?channel=${ch}`)).status, 200);
  t.is((await post(url, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH)).status, 200);
});

test('reset: the socket is destroyed without a response', async (t) => {
  const ch = channel('f');
  await addFault(url, ch, { type: 'reset' }, 2);
  const err = await t.throwsAsync(post(url, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH));
  t.regex(String((err as any).cause?.code ?? (err as any).cause?.message ?? err), /ECONNRESET|socket|closed|terminated/i);
  const sdkErr = await t.throwsAsync(openai(ch).chat.completions.create(chatBody() as any));
  t.true(sdkErr instanceof OpenAI.APIConnectionError);
  t.is((await requests(url, ch)).count, 2);
  t.is((await post(url, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH)).status, 200);
});

test('hang: never answers; the socket closes when the client gives up', async (t) => {
  // A private simulator so the connection count is ours alone.
  const own = createSimulator();
  const base = await own.listen(0);
  try {
    const ch = channel('f');
    await addFault(base, ch, { type: 'hang' }, 1);
    const socketClosed = new Promise<void>((resolve) => {
      own.server.on('request', (req) => {
        if (req.url?.endsWith('/chat/completions')) req.socket.once('close', () => resolve());
      });
    });
    const ac = new AbortController();
    let answered = false;
    const pending = fetch(`${base}/ch/${ch}/v1/chat/completions`, { method: 'POST', headers: OPENAI_AUTH, body: JSON.stringify(chatBody()), signal: ac.signal }).then(
      () => (answered = true),
      (e: unknown) => e,
    );
    // Wait until the request has reached the simulator, then give it time to (not) answer.
    for (let i = 0; i < 200 && (await requests(base, ch)).count < 1; i++) await new Promise((r) => setTimeout(r, 10));
    t.is((await requests(base, ch)).count, 1);
    await new Promise((r) => setTimeout(r, 300));
    t.false(answered);
    ac.abort();
    const err = await pending;
    t.is((err as DOMException | null)?.name, 'AbortError');
    // The client's abort closed its socket, and the server let it go.
    await Promise.race([socketClosed, new Promise((_, reject) => setTimeout(() => reject(new Error('socket still open')), 2000))]);

    const sdkErr = await t.throwsAsync(
      (async () => {
        await addFault(base, ch, { type: 'hang' }, 1);
        return new OpenAI({ baseURL: `${base}/ch/${ch}/v1`, apiKey: 'k', maxRetries: 0, timeout: 200 }).chat.completions.create(chatBody() as any);
      })(),
    );
    t.true(sdkErr instanceof OpenAI.APIConnectionTimeoutError);
    // The next request is answered again (clear first: under load the SDK may give up before its request arrives).
    await control(base, 'DELETE', `/_control/faults?channel=${ch}`);
    t.is((await post(base, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH)).status, 200);
  } finally {
    await own.close();
  }
});

test('cut on a stream: K frames, then the connection drops', async (t) => {
  const ch = channel('f');
  await addFault(url, ch, { type: 'cut', after_chunks: 3 }, 2);
  const r = await post(url, `/ch/${ch}/v1/chat/completions`, chatBody({ stream: true }), OPENAI_AUTH);
  t.is(r.status, 200);
  const { text, error } = await readAll(r);
  t.truthy(error);
  const frames = parseSse(text);
  t.is(frames.length, 3);
  t.false(text.includes('[DONE]'));
  t.is(JSON.parse(frames[0].data).choices[0].delta.role, 'assistant');

  const stream = await openai(ch).chat.completions.create({ ...chatBody(), stream: true } as any);
  const got: unknown[] = [];
  const err = await t.throwsAsync(async () => {
    for await (const c of stream as any) got.push(c);
  });
  t.truthy(err);
  t.is(got.length, 3);
});

test('cut on a non-streaming answer: half the body, then the connection drops', async (t) => {
  const ch = channel('f');
  await addFault(url, ch, { type: 'cut', after_chunks: 0 }, 2);
  const r = await post(url, `/ch/${ch}/v1/chat/completions`, chatBody(), OPENAI_AUTH);
  t.is(r.status, 200);
  const len = Number(r.headers.get('content-length'));
  const { text, error } = await readAll(r);
  t.truthy(error);
  t.is(text.length, Math.floor(len / 2));
  t.true(text.startsWith('{"id":"chatcmpl-'));
  await t.throwsAsync(openai(ch).chat.completions.create(chatBody() as any));
});

test('cut on Anthropic and Responses streams via the SDKs', async (t) => {
  const ch = channel('f');
  await addFault(url, ch, { type: 'cut', after_chunks: 4 }, 2);
  const events: string[] = [];
  const s = anthropic(ch).messages.stream({ model: 'c', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
  s.on('streamEvent', (e) => events.push(e.type));
  await t.throwsAsync(s.finalMessage());
  t.deepEqual(events, ['message_start', 'content_block_start', 'content_block_delta']); // ping is frame 3, not surfaced

  const rs = await openai(ch).responses.create({ model: 'gpt-5', input: 'x', stream: true });
  const types: string[] = [];
  await t.throwsAsync(async () => {
    for await (const e of rs) types.push(e.type);
  });
  t.deepEqual(types, ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
});

test('error_frame on Anthropic: K frames, then the overloaded error event, then the end', async (t) => {
  const ch = channel('f');
  await addFault(url, ch, { type: 'error_frame', after_chunks: 4 }, 2);
  const r = await post(url, `/ch/${ch}/v1/messages`, { model: 'c', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'x' }] }, ANTHROPIC_AUTH);
  t.is(r.status, 200);
  const { text, error } = await readAll(r);
  t.is(error, null); // the stream ends cleanly
  const events = parseSse(text);
  t.deepEqual(events.map((e) => e.event), ['message_start', 'content_block_start', 'ping', 'content_block_delta', 'error']);
  t.deepEqual(JSON.parse(events[4].data), { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  t.true(text.endsWith('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'));

  const err = await t.throwsAsync(anthropic(ch).messages.stream({ model: 'c', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).finalMessage());
  t.true(err instanceof Anthropic.APIError);
  t.regex(String(err), /Overloaded|overloaded_error/);
});

test('error_frame on OpenAI chat and Gemini streams uses their error payloads', async (t) => {
  const ch = channel('f');
  await addFault(url, ch, { type: 'error_frame', after_chunks: 2 }, 2);
  const r = await post(url, `/ch/${ch}/v1/chat/completions`, chatBody({ stream: true }), OPENAI_AUTH);
  const frames = parseSse((await readAll(r)).text);
  t.is(frames.length, 3);
  t.is(JSON.parse(frames[2].data).error.type, 'server_error');

  const g = await post(url, `/ch/${ch}/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse&key=k`, { contents: [{ parts: [{ text: 'x' }] }] });
  const gf = parseSse((await readAll(g)).text);
  t.is(gf.length, 3);
  t.deepEqual(JSON.parse(gf[2].data).error.status, 'UNAVAILABLE');
});

test('the "*" channel faults every channel without its own fault', async (t) => {
  // A private simulator: a wildcard would disturb the other tests.
  const own = createSimulator();
  const base = await own.listen(0);
  try {
    await addFault(base, '*', { type: 'status', status: 500 }, 2);
    t.is((await post(base, `/ch/a/v1/chat/completions`, chatBody(), OPENAI_AUTH)).status, 500);
    t.is((await post(base, `/v1/chat/completions`, chatBody(), OPENAI_AUTH)).status, 500);
    t.is((await post(base, `/ch/a/v1/chat/completions`, chatBody(), OPENAI_AUTH)).status, 200);
  } finally {
    await own.close();
  }
});

test('control API rejects malformed faults', async (t) => {
  const bad = async (body: unknown) => (await control(url, 'POST', '/_control/faults', body)).status;
  t.is(await bad({ channel: 'x', fault: { type: 'explode' } }), 400);
  t.is(await bad({ fault: { type: 'reset' } }), 400);
  t.is(await bad({ channel: 'x', fault: { type: 'status', status: 99 } }), 400);
  t.is(await bad({ channel: 'x', fault: { type: 'cut', after_chunks: -1 } }), 400);
  t.is(await bad({ channel: 'x', fault: { type: 'reset' }, times: 0 }), 400);
  t.is(await bad({ channel: 'bad name', fault: { type: 'reset' } }), 400);
  const r = await control(url, 'POST', '/_control/faults', { channel: 'x', fault: { type: 'reset' } });
  t.is(r.status, 200);
  await control(url, 'DELETE', '/_control/faults?channel=x');
});
