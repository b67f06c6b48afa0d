import test from 'ava';
import type { TestGateway } from '../helpers/stack';
import { assertShape, nestedText, send, world, type Shape } from './kit';

// One body policy at the body parser (gateway/middleware/body.ts): size and nesting depth, a clear
// 400 (413 for size) in the endpoint's shape, before any handler, store write or upstream call.

let gw: TestGateway;
let key: string;
test.before(async () => {
  ({ gw, key } = await world());
});
test.after.always(async () => gw?.close());

const upstreamCount = async (channel: string) => (await gw.control('GET', `/requests?channel=${channel}`)).count as number;

/** A body of the family with the deep value spliced into a field the schema lets through untouched. */
const FAMILIES: Array<{ path: string; shape: Shape; body: (deep: string) => string; channel?: string }> = [
  { path: '/v1/chat/completions', shape: 'openai', channel: 'openai-a', body: (d) => `{"model":"gpt-5.1","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"metadata":{"x":${d}}}` },
  { path: '/v1/responses', shape: 'openai', channel: 'openai-resp-a', body: (d) => `{"model":"gpt-5.1","input":"hi","max_output_tokens":5,"metadata":{"x":${d}}}` },
  { path: '/v1/messages', shape: 'messages', channel: 'anthropic-a', body: (d) => `{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"metadata":{"x":${d}}}` },
  { path: '/v1beta/models/gemini-2.5-pro:generateContent', shape: 'generate-content', channel: 'gemini-a', body: (d) => `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"x":${d}}` },
  { path: '/v1/models/gemini-2.5-pro:streamGenerateContent', shape: 'generate-content', channel: 'gemini-a', body: (d) => `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"x":${d}}` },
  { path: '/v1/images/generations', shape: 'openai', body: (d) => `{"model":"gpt-image-1","prompt":"a fox","async":true,"x":${d}}` },
  { path: '/v1/images/edits', shape: 'openai', body: (d) => `{"model":"gpt-image-1","prompt":"a fox","image":"https://cdn.example.com/a.png","x":${d}}` },
  { path: '/v1/videos/generations', shape: 'openai', body: (d) => `{"model":"seedance-1-0-pro","content":[{"type":"text","text":"a fox"}],"x":${d}}` },
  { path: '/v1/music/generations', shape: 'openai', body: (d) => `{"model":"suno-v4-5","prompt":"la la","x":${d}}` },
  { path: '/v1/audio/speech', shape: 'openai', body: (d) => `{"model":"speech-2-5-hd","text":"hello","voice_id":"male-qn-qingse","x":${d}}` },
  { path: '/v1/audio/voice-clone', shape: 'openai', body: (d) => `{"audio_url":"https://cdn.example.com/v.mp3","x":${d}}` },
  { path: '/v1/transcripts/extract', shape: 'openai', body: (d) => `{"url":"https://v.example.com/a","x":${d}}` },
  { path: '/v1/videos/avatars', shape: 'openai', body: (d) => `{"name":"n","source_url":"https://cdn.example.com/a.jpg","x":${d}}` },
  { path: '/v1/music/assets', shape: 'openai', body: (d) => `{"generation_id":"x","x":${d}}` },
  { path: '/v1/embeddings', shape: 'openai', body: (d) => `{"model":"m","input":"x","x":${d}}` },
];

/** The policy's limit (gateway/middleware/body.ts MAX_JSON_DEPTH). */
const MAX_JSON_DEPTH = 100;

for (const depth of [10_000, 1000, MAX_JSON_DEPTH + 1]) {
  test.serial(`JSON nested ${depth} deep: 400 on every JSON endpoint, in its shape, nothing sent upstream`, async (t) => {
    const before = new Map<string, number>();
    for (const f of FAMILIES) if (f.channel) before.set(f.channel, await upstreamCount(f.channel));
    for (const f of FAMILIES) {
      const r = await send(gw, 'POST', f.path, { key, body: f.body(nestedText(depth)) });
      t.is(r.status, 400, `${f.path}: ${r.text.slice(0, 300)}`);
      assertShape(t, r, f.shape, f.path);
      t.regex(r.json?.error?.message ?? '', /nests deeper than/, f.path);
    }
    for (const [channel, n] of before) t.is(await upstreamCount(channel), n, `forwarded to ${channel}`);
  });
}

test('the admin API has the same policy', async (t) => {
  const r = await send(gw, 'POST', '/admin/v1/accounts', { body: `{"name":"x","y":${nestedText(5000)}}`, headers: { authorization: `Bearer ${gw.config.ADMIN_TOKEN}` } });
  t.is(r.status, 400);
  assertShape(t, r, 'openai');
});

test.serial('nesting within the policy still passes through to the upstream', async (t) => {
  const f = FAMILIES[0];
  const r = await send(gw, 'POST', f.path, { key, body: f.body(nestedText(MAX_JSON_DEPTH - 4)) });
  t.is(r.status, 200, r.text.slice(0, 300));
});
