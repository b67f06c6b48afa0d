import test from 'ava';
import { existsSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { GoogleGenAI } from '@google/genai';
import type { TestGateway } from '../helpers/stack';
import { assertShape, send, world } from './kit';

// The native generate-content endpoints answer identically under /v1beta (spec 1 section 4.3) and /v1,
// where Google's SDKs call them (`apiVersion: 'v1'`; Python's google-genai). No SDK setting beyond
// the base URL and the key is needed.

let gw: TestGateway;
let key: string;
test.before(async () => {
  ({ gw, key } = await world());
});
test.after.always(async () => gw?.close());

for (const apiVersion of [undefined, 'v1beta', 'v1'] as const) {
  test(`@google/genai (JS), ${apiVersion ?? 'default settings'}: generateContent and generateContentStream`, async (t) => {
    const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url, ...(apiVersion ? { apiVersion } : {}) } });
    const r = await ai.models.generateContent({ model: 'gemini-2.5-pro', contents: 'Hello Gemini', config: { maxOutputTokens: 20 } });
    t.truthy(r.text);
    t.true((r.usageMetadata?.totalTokenCount ?? 0) > 0);
    let text = '';
    for await (const c of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'Stream please', config: { maxOutputTokens: 20 } })) text += c.text ?? '';
    t.truthy(text);
    // An error comes back as the SDK's ApiError, parsed from Google's shape.
    const err = await t.throwsAsync(ai.models.generateContent({ model: 'no-such-model', contents: 'x' }));
    t.regex(String(err?.message), /no-such-model/);
    t.is((err as { status?: number }).status, 400);
  });
}

test('/v1 and /v1beta answer the same: status, shape and usage row', async (t) => {
  const body = { contents: [{ role: 'user', parts: [{ text: 'Same answer please' }] }], generationConfig: { maxOutputTokens: 10 } };
  for (const prefix of ['/v1beta', '/v1']) {
    const ok = await send(gw, 'POST', `${prefix}/models/gemini-2.5-pro:generateContent`, { body, headers: { 'x-goog-api-key': key } });
    t.is(ok.status, 200, `${prefix}: ${ok.text}`);
    t.truthy(ok.json.candidates?.[0]?.content?.parts?.[0]?.text);
    t.true(ok.json.usageMetadata.totalTokenCount > 0);
    const sse = await send(gw, 'POST', `${prefix}/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=${key}`, { body });
    t.is(sse.status, 200);
    t.regex(sse.headers.get('content-type') ?? '', /text\/event-stream/);
    const array = await send(gw, 'POST', `${prefix}/models/gemini-2.5-flash:streamGenerateContent`, { body, headers: { 'x-goog-api-key': key } });
    t.is(array.status, 200);
    t.true(Array.isArray(array.json));
    for (const [r, status] of [
      [await send(gw, 'POST', `${prefix}/models/gemini-2.5-pro:generateContent`, { body }), 401],
      [await send(gw, 'POST', `${prefix}/models/models%2Fnope:generateContent`, { body, headers: { 'x-goog-api-key': key } }), 400],
      [await send(gw, 'POST', `${prefix}/models/gemini-2.5-pro:generateContent`, { body: { contents: 'x' }, headers: { 'x-goog-api-key': key } }), 400],
    ] as const) {
      t.is(r.status, status, `${prefix}: ${r.text}`);
      assertShape(t, r, 'generate-content', prefix);
    }
  }
});

const PYTHON = process.env.HOSTILE_PYTHON ?? '.data/pyvenv/bin/python';
const SCRIPT = `
import os, sys
from google import genai
from google.genai import types
client = genai.Client(api_key=os.environ["KEY"], http_options=types.HttpOptions(base_url=os.environ["BASE"]))
r = client.models.generate_content(model="gemini-2.5-pro", contents="Hello from Python", config=types.GenerateContentConfig(max_output_tokens=20))
assert r.text, r
assert r.usage_metadata.total_token_count > 0
text = "".join(c.text or "" for c in client.models.generate_content_stream(model="gemini-2.5-flash", contents="Stream please"))
assert text
for version in ("v1", "v1beta"):
    c = genai.Client(api_key=os.environ["KEY"], http_options=types.HttpOptions(base_url=os.environ["BASE"], api_version=version))
    assert c.models.generate_content(model="gemini-2.5-pro", contents="hi").text
try:
    client.models.generate_content(model="no-such-model", contents="x")
    sys.exit("expected an error")
except genai.errors.ClientError as e:
    assert e.code == 400, e
print("ok")
`;

test('google-genai (Python), default settings', async (t) => {
  if (!existsSync(PYTHON)) {
    t.log(`skipped: no Python venv with google-genai at ${PYTHON} (python3 -m venv .data/pyvenv && .data/pyvenv/bin/pip install google-genai)`);
    t.pass();
    return;
  }
  const probe = await promisify(execFile)(PYTHON, ['-c', 'import google.genai']).catch((e: Error) => e);
  if (probe instanceof Error) {
    t.log(`skipped: google-genai is not installed for ${PYTHON}`);
    t.pass();
    return;
  }
  const { stdout } = await promisify(execFile)(PYTHON, ['-c', SCRIPT], { env: { ...process.env, KEY: key, BASE: gw.url }, timeout: 60_000 });
  t.is(stdout.trim(), 'ok');
});
