import test from 'ava';
import type { TestGateway } from '../helpers/stack';
import { assertShape, send, world } from './kit';

// One URL policy (domain/url-policy.ts, ipaddr.js) on every field whose URL a vendor will fetch.

let gw: TestGateway;
let key: string;
test.before(async () => {
  ({ gw, key } = await world());
});
test.after.always(async () => gw?.close());

/** Every body field whose URL the vendor fetches: path, body builder, the param the 400 names. */
const FIELDS: Array<{ path: string; body: (u: string) => unknown; param: RegExp; multipart?: boolean }> = [
  { path: '/v1/images/generations', body: (u) => ({ model: 'gpt-image-1', prompt: 'a fox', async: true, image: u }), param: /^image$/ },
  { path: '/v1/images/generations', body: (u) => ({ model: 'gpt-image-1', prompt: 'a fox', async: true, image: ['https://cdn.example.com/ok.png', u] }), param: /^image\.1$/ },
  { path: '/v1/images/generations', body: (u) => ({ model: 'gpt-image-1', prompt: 'a fox', async: true, image_urls: [u] }), param: /^image_urls\.0$/ },
  { path: '/v1/images/edits', body: (u) => ({ model: 'gpt-image-1', prompt: 'a fox', image: u }), param: /^image$/ },
  { path: '/v1/images/edits', body: (u) => ({ model: 'gpt-image-1', prompt: 'a fox', image_urls: [u] }), param: /^image_urls\.0$/ },
  { path: '/v1/images/edits', body: (u) => u, param: /^image/, multipart: true },
  { path: '/v1/videos/generations', body: (u) => ({ model: 'seedance-1-0-pro', content: [{ type: 'text', text: 'a fox' }, { type: 'image_url', image_url: { url: u } }] }), param: /^content\.1\.image_url\.url$/ },
  { path: '/v1/videos/generations', body: (u) => ({ model: 'dh-lipsync', source_video_url: u, audio_url: 'https://cdn.example.com/a.mp3', duration: 15 }), param: /^source_video_url$/ },
  { path: '/v1/videos/generations', body: (u) => ({ model: 'dh-lipsync', source_video_url: 'https://cdn.example.com/a.mp4', audio_url: u, duration: 15 }), param: /^audio_url$/ },
  { path: '/v1/videos/generations', body: (u) => ({ model: 'dh-avatar', avatar: 'preset_anna', audio_url: u, duration: 20 }), param: /^audio_url$/ },
  { path: '/v1/videos/generations', body: (u) => ({ model: 'dh-motion', source_video_url: 'https://cdn.example.com/a.mp4', content: [{ type: 'image_url', image_url: { url: u } }], face_count: 1, duration: 10 }), param: /^content\.0\.image_url\.url$/ },
  { path: '/v1/videos/generations', body: (u) => ({ model: 'clip-realman', style_id: 'tpl_rm_vlog_01', source_video_url: u }), param: /^source_video_url$/ },
  { path: '/v1/videos/generations', body: (u) => ({ model: 'clip-mixcut', style_id: 'tpl_mix_product_01', audio_url: 'https://cdn.example.com/v.mp3', materials: [{ type: 'image', file_url: u }] }), param: /^materials\.0\.file_url$/ },
  { path: '/v1/transcripts/extract', body: (u) => ({ url: u }), param: /^url$/ },
  { path: '/v1/audio/voice-clone', body: (u) => ({ audio_url: u, name: 'n' }), param: /^audio_url$/ },
  { path: '/v1/audio/voices', body: (u) => ({ audio_url: u, name: 'n' }), param: /^audio_url$/ },
  { path: '/v1/videos/avatars', body: (u) => ({ name: 'n', source_url: u }), param: /^source_url$/ },
];

const SAMPLE = ['http://[::ffff:127.0.0.1]/a.png', 'http://[::ffff:7f00:1]/a.png', 'http://[::]/a.png', 'http://localhost./a.png', 'http://2130706433/a.png', 'http://0x7f.1/a.png', 'http://169.254.169.254/a', 'http://[fd12::1]/a.png', 'http://100.64.1.1/a.png', 'http://192.168.0.10./a.png'];

test('every URL field of every media family refuses private targets with a 400 naming the field, nothing charged', async (t) => {
  const acc = await gw.newAccount();
  const k = (await gw.newKey(acc.id)).key;
  const before = await gw.deps.wallet.balance(acc.id);
  for (const f of FIELDS) {
    for (const u of SAMPLE) {
      let r;
      if (f.multipart) {
        const form = new FormData();
        form.set('model', 'gpt-image-1');
        form.set('prompt', 'a fox');
        form.append('image', u);
        const res = await fetch(`${gw.url}${f.path}`, { method: 'POST', headers: { authorization: `Bearer ${k}` }, body: form });
        const text = await res.text();
        r = { status: res.status, headers: res.headers, text, json: JSON.parse(text) };
      } else {
        r = await send(gw, 'POST', f.path, { key: k, body: f.body(u) });
      }
      t.is(r.status, 400, `${f.path} ${u}: ${r.text}`);
      assertShape(t, r, 'openai', f.path);
      t.regex(String(r.json?.error?.param), f.param, `${f.path} ${u}: ${r.text}`);
    }
  }
  t.is(await gw.deps.wallet.balance(acc.id), before);
});

test('a public reference still goes through', async (t) => {
  const r = await send(gw, 'POST', '/v1/images/generations', { key, body: { model: 'gpt-image-1', prompt: 'a fox', async: true, image: 'https://cdn.example.com/a.png' } });
  t.is(r.status, 200, r.text);
});

test('chat image and file URLs take the same policy, in each protocol shape, before any upstream call', async (t) => {
  const cases: Array<[string, (u: string) => unknown, 'openai' | 'messages']> = [
    ['/v1/chat/completions', (u) => ({ model: 'gpt-5.1', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'text', text: 'what is it' }, { type: 'image_url', image_url: { url: u } }] }] }), 'openai'],
    ['/v1/messages', (u) => ({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: u } }, { type: 'text', text: 'what is it' }] }] }), 'messages'],
    ['/v1/messages', (u) => ({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: u } }, { type: 'text', text: 'summarise' }] }] }), 'messages'],
    ['/v1/responses', (u) => ({ model: 'gpt-5.1', max_output_tokens: 5, input: [{ role: 'user', content: [{ type: 'input_text', text: 'what is it' }, { type: 'input_image', image_url: u }] }] }), 'openai'],
    ['/v1/responses', (u) => ({ model: 'gpt-5.1', max_output_tokens: 5, input: [{ role: 'user', content: [{ type: 'input_text', text: 'summarise' }, { type: 'input_file', file_url: u }] }] }), 'openai'],
  ];
  const count = async (c: string) => (await gw.control('GET', `/requests?channel=${c}`)).count as number;
  const before = [await count('openai-a'), await count('anthropic-a'), await count('openai-resp-a')];
  for (const [path, body, shape] of cases) {
    for (const u of SAMPLE) {
      const r = await send(gw, 'POST', path, { key, body: body(u) });
      t.is(r.status, 400, `${path} ${u}: ${r.text}`);
      assertShape(t, r, shape, path);
    }
  }
  t.deepEqual([await count('openai-a'), await count('anthropic-a'), await count('openai-resp-a')], before);
  const ok = await send(gw, 'POST', '/v1/chat/completions', { key, body: cases[0][1]('https://cdn.example.com/cat.png') });
  t.is(ok.status, 200, ok.text);
});

test('generate-content fileData.fileUri takes the same policy: a 400 in the Google shape naming the field, no upstream call; a public URL or a Files API / gs:// URI goes through (security audit)', async (t) => {
  const path = '/v1beta/models/gemini-2.5-flash:generateContent';
  const body = (u: string, snake = false) => ({
    contents: [{ role: 'user', parts: [{ text: 'hi' }, snake ? { file_data: { mime_type: 'image/png', file_uri: u } } : { fileData: { mimeType: 'image/png', fileUri: u } }] }],
    generationConfig: { maxOutputTokens: 5 },
  });
  const count = async () => {
    let n = 0;
    for (const c of ['gemini-a', 'gemini-b', 'gemini-c']) n += (await gw.control('GET', `/requests?channel=${c}`)).count as number;
    return n;
  };
  const before = await count();
  for (const u of [...SAMPLE, 'http://169.254.169.254/latest/meta-data/iam', 'https://[::127.0.0.1]/a.png', 'https://user:pw@cdn.example.com/a.png']) {
    for (const snake of [false, true]) {
      const r = await send(gw, 'POST', path, { key, body: body(u, snake) });
      t.is(r.status, 400, `${u}: ${r.text}`);
      assertShape(t, r, 'generate-content', path);
      t.regex(r.json.error.message, /fileUri|file_uri/, r.text);
    }
  }
  t.is(await count(), before);
  for (const u of ['https://cdn.example.com/cat.png', 'https://generativelanguage.googleapis.com/v1beta/files/abc123', 'gs://bucket/cat.png']) {
    const ok = await send(gw, 'POST', path, { key, body: body(u) });
    t.is(ok.status, 200, `${u}: ${ok.text}`);
  }
});
