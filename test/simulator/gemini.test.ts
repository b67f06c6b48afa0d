import test from 'ava';
import { FunctionCallingConfigMode, GoogleGenAI, type GenerateContentResponse } from '@google/genai';
import type { Simulator } from '../../dev/simulator/app';
import { WORDS } from '../../dev/simulator/text';
import { GEMINI_AUTH, channel, jsonOf, parseSse, post, requests, setUsage, startSim } from './helpers';

let sim: Simulator;
let url: string;

test.before(async () => {
  ({ sim, url } = await startSim());
});
test.after.always(async () => {
  await sim?.close();
});

const client = (ch: string) => new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: `${url}/ch/${ch}` } });

test('generateContent through the official SDK', async (t) => {
  const ch = channel('ge');
  const r = await client(ch).models.generateContent({
    model: 'gemini-2.5-flash',
    contents: 'Explain how AI works',
    config: { systemInstruction: 'Be brief.' },
  });
  const words = r.text!.split(' ');
  t.is(words.length, 24);
  t.true(words.every((w) => WORDS.includes(w)));
  t.is(r.candidates![0].finishReason as string | undefined, 'STOP');
  t.is(r.candidates![0].content!.role, 'model');
  t.is(r.modelVersion, 'gemini-2.5-flash');
  t.truthy(r.responseId);
  // ceil((20 + 9) / 4) = 8
  t.is(r.usageMetadata!.promptTokenCount, 8);
  t.is(r.usageMetadata!.candidatesTokenCount, 24);
  t.is(r.usageMetadata!.totalTokenCount, 32);
  t.is(r.usageMetadata!.cachedContentTokenCount, undefined); // zero fields are omitted, as Google does

  const log = await requests(url, ch);
  t.is(log.requests[0].path, '/v1beta/models/gemini-2.5-flash:generateContent');
  t.is(log.requests[0].headers['x-goog-api-key'], 'k');
});

test('maxOutputTokens caps output with finishReason MAX_TOKENS', async (t) => {
  const r = await client(channel('ge')).models.generateContent({ model: 'gemini-2.5-flash', contents: 'hello', config: { maxOutputTokens: 3 } });
  t.is(r.candidates![0].finishReason as string | undefined, 'MAX_TOKENS');
  t.is(r.text!.split(' ').length, 3);
  t.is(r.usageMetadata!.candidatesTokenCount, 3);
});

test('generateContentStream: one chunk per token, the last with finishReason and usage', async (t) => {
  const ch = channel('ge');
  const stream = await client(ch).models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'stream it', config: { maxOutputTokens: 5 } });
  const chunks: GenerateContentResponse[] = [];
  for await (const c of stream) chunks.push(c);
  t.is(chunks.length, 5);
  const last = chunks[4];
  t.is(last.candidates![0].finishReason as string | undefined, 'MAX_TOKENS');
  t.is(last.usageMetadata!.candidatesTokenCount, 5);
  t.is(last.usageMetadata!.promptTokenCount, 3);
  t.true(chunks.slice(0, 4).every((c) => c.candidates![0].finishReason === undefined && c.usageMetadata === undefined));
  const text = chunks.map((c) => c.text).join('');
  const whole = await client(ch).models.generateContent({ model: 'gemini-2.5-flash', contents: 'stream it', config: { maxOutputTokens: 5 } });
  t.is(text, whole.text ?? '');
  const log = await requests(url, ch);
  t.is(log.requests[0].path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent');
  t.is(log.requests[0].query.alt, 'sse');
});

const functionDeclarations = [
  {
    name: 'get_weather',
    description: 'Weather',
    parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' }, days: { type: 'INTEGER' } }, required: ['city'] },
  },
  { name: 'get_time', parameters: { type: 'OBJECT', properties: { tz: { type: 'STRING' } }, required: ['tz'] } },
] as any;

test('function calling: functionCall part, ANY with allowedFunctionNames, NONE', async (t) => {
  const ch = channel('ge');
  const r = await client(ch).models.generateContent({ model: 'gemini-2.5-flash', contents: 'weather in Paris?', config: { tools: [{ functionDeclarations }] } });
  const calls = r.functionCalls!;
  t.is(calls.length, 1);
  t.is(calls[0].name, 'get_weather');
  t.deepEqual(Object.keys(calls[0].args!), ['city']);
  t.is(typeof calls[0].args!.city, 'string');
  t.is(r.candidates![0].finishReason as string | undefined, 'STOP');

  const forced = await client(ch).models.generateContent({
    model: 'gemini-2.5-flash',
    contents: 'weather in Paris?',
    config: { tools: [{ functionDeclarations }], toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['get_time'] } } },
  });
  t.is(forced.functionCalls![0].name, 'get_time');

  const none = await client(ch).models.generateContent({
    model: 'gemini-2.5-flash',
    contents: 'weather in Paris?',
    config: { tools: [{ functionDeclarations }], toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.NONE } } },
  });
  t.is(none.functionCalls, undefined);
  t.is(typeof none.text, 'string');
});

test('after a functionResponse the model answers with text; streamed function call', async (t) => {
  const ch = channel('ge');
  const r = await client(ch).models.generateContent({
    model: 'gemini-2.5-flash',
    config: { tools: [{ functionDeclarations }] },
    contents: [
      { role: 'user', parts: [{ text: 'weather in Paris?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }] },
    ],
  });
  t.is(r.functionCalls, undefined);
  t.is(r.text!.split(' ').length, 24);

  const stream = await client(ch).models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'weather in Paris?', config: { tools: [{ functionDeclarations }] } });
  const chunks: GenerateContentResponse[] = [];
  for await (const c of stream) chunks.push(c);
  t.is(chunks.length, 1);
  t.is(chunks[0].functionCalls![0].name, 'get_weather');
  t.is(chunks[0].candidates![0].finishReason as string | undefined, 'STOP');
});

test('usage override: cachedContentTokenCount and thoughtsTokenCount', async (t) => {
  const ch = channel('ge');
  await setUsage(url, ch, { prompt_tokens: 250000, cached_tokens: 1000, reasoning_tokens: 7, output_tokens: 40 });
  const r = await client(ch).models.generateContent({ model: 'gemini-2.5-pro', contents: 'big prompt' });
  t.deepEqual(
    { p: r.usageMetadata!.promptTokenCount, c: r.usageMetadata!.cachedContentTokenCount, o: r.usageMetadata!.candidatesTokenCount, th: r.usageMetadata!.thoughtsTokenCount, tot: r.usageMetadata!.totalTokenCount },
    { p: 250000, c: 1000, o: 40, th: 7, tot: 250047 },
  );
  // The text itself does not change with the override.
  t.is(r.text!.split(' ').length, 24);
});

test('raw SSE framing: data frames ended by CRLF CRLF, as Google sends them', async (t) => {
  const r = await post(url, `/ch/${channel('ge')}/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse`, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 2 } }, GEMINI_AUTH);
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type')!, /^text\/event-stream/);
  const body = await r.text();
  t.true(body.endsWith('}\r\n\r\n'));
  t.is(body.split('\r\n\r\n').length, 3);
  const frames = parseSse(body).map((e) => JSON.parse(e.data));
  t.is(frames.length, 2);
  t.is(frames[1].candidates[0].finishReason as string | undefined, 'MAX_TOKENS');
  t.is(frames[1].usageMetadata.totalTokenCount, frames[1].usageMetadata.promptTokenCount + 2);
});

test('streamGenerateContent without alt=sse streams a JSON array', async (t) => {
  const r = await post(url, `/ch/${channel('ge')}/v1beta/models/gemini-2.0-flash:streamGenerateContent?key=k`, { contents: [{ parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 3 } });
  t.is(r.status, 200);
  const arr = JSON.parse(await r.text());
  t.true(Array.isArray(arr));
  t.is(arr.length, 3);
  t.is(arr[2].candidates[0].finishReason as string | undefined, 'MAX_TOKENS');
});

test('key via ?key=, missing key 403, missing contents 400, all in the Google error shape', async (t) => {
  const path = `/ch/${channel('ge')}/v1beta/models/gemini-2.0-flash:generateContent`;
  const body = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
  t.is((await post(url, path + '?key=abc', body)).status, 200);

  let r = await post(url, path, body);
  t.is(r.status, 403);
  let j = await jsonOf(r);
  t.is(j.error.code, 403);
  t.is(j.error.status, 'PERMISSION_DENIED');

  r = await post(url, path, { contents: [] }, GEMINI_AUTH);
  t.is(r.status, 400);
  j = await jsonOf(r);
  t.deepEqual([j.error.code, j.error.status], [400, 'INVALID_ARGUMENT']);
  t.regex(j.error.message, /contents is not specified/);

  r = await post(url, path, 'nope', GEMINI_AUTH);
  t.is(r.status, 400);

  const err = await t.throwsAsync(client(channel('ge')).models.generateContent({ model: 'gemini-2.0-flash', contents: [] }));
  t.regex(String(err?.message), /contents is not specified|contents/);
});
