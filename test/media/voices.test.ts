import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';

const GRANT = parseCredits('40.44');
const CLONE = parseCredits('3');
const HD = parseCredits('0.0001');

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { simulator: true, worker: true, mediaDelayMs: 0 });
});
test.after.always(async () => gw?.close());

const post = (key: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const get = (key: string, path: string) => fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });

async function account() {
  const a = await gw.newAccount();
  return { id: a.id, key: (await gw.newKey(a.id)).key };
}

async function upstream(channel: string, path: string): Promise<Array<Record<string, any>>> {
  const r = await gw.control('GET', `/media/tasks?channel=${channel}`);
  return (r.tasks as Array<{ path: string; body: Record<string, any> }>).filter((x) => x.path === path).map((x) => x.body);
}

const SAMPLE = { audio_url: 'https://cdn.example.com/my-voice.mp3', name: 'My narrator' };

test('clone: the voice record at once, charged per creation; the upstream voice_id is the voice id', async (t) => {
  const a = await account();
  const r = await post(a.key, '/v1/audio/voices', SAMPLE);
  t.is(r.status, 200, await r.clone().text());
  const v = (await r.json()) as Record<string, any>;
  t.is(v.object, 'voice');
  t.is(v.status, 'succeeded');
  t.is(v.name, 'My narrator');
  t.is(v.model, 'voice-clone');
  t.is(v.demo_audio, null);
  t.is(v.error, null);
  t.regex(v.voice_id, /^[A-Za-z][A-Za-z0-9_-]{6,254}[A-Za-z0-9]$/);
  t.is(await gw.deps.wallet.balance(a.id), GRANT - CLONE);
  const sent = (await upstream('minimax-a', '/v1/voice_clone')).find((b) => b.voice_id === v.voice_id)!;
  t.is(sent.audio_url, SAMPLE.audio_url);
  t.is(sent.text, undefined);
  const usage = await gw.deps.db.Usage.findById(v.voice_id).lean();
  t.is(usage?.unit_type, 'creation');
  t.is(usage?.cost_nano, CLONE);
});

test('clone with preview text: demo audio spoken by the preview model; voice-clone is the same operation', async (t) => {
  const a = await account();
  const r = await post(a.key, '/v1/audio/voice-clone', { ...SAMPLE, text: 'Hello from my new voice.' });
  t.is(r.status, 200);
  const v = (await r.json()) as Record<string, any>;
  t.true(v.demo_audio.startsWith('http'));
  const sent = (await upstream('minimax-a', '/v1/voice_clone')).find((b) => b.voice_id === v.voice_id)!;
  t.is(sent.text, 'Hello from my new voice.');
  t.is(sent.model, 'speech-2.5-hd-preview');
  t.is(await gw.deps.wallet.balance(a.id), GRANT - CLONE);
});

test('voices: platform presets under presets, own clones under cloned; a cloned voice speaks', async (t) => {
  const a = await account();
  const b = await account();
  const v = (await (await post(a.key, '/v1/audio/voices', SAMPLE)).json()) as Record<string, any>;
  const list = (await (await get(a.key, '/v1/audio/voices')).json()) as { presets: Array<Record<string, any>>; cloned: Array<Record<string, any>> };
  t.true(list.presets.length > 0);
  t.truthy(list.presets.find((p) => p.voice_id === 'male-qn-qingse'));
  t.deepEqual(list.cloned.map((c) => c.voice_id), [v.voice_id]);
  const other = (await (await get(b.key, '/v1/audio/voices')).json()) as { cloned: unknown[] };
  t.deepEqual(other.cloned, []);
  t.is((await get(a.key, `/v1/audio/voices/${v.voice_id}`)).status, 200);
  t.is((await get(b.key, `/v1/audio/voices/${v.voice_id}`)).status, 404);
  // speech with the cloned voice: this account yes, another no
  const text = 'Spoken with a cloned voice.';
  const ok = await post(a.key, '/v1/audio/speech', { model: 'speech-2-5-hd', text, voice_id: v.voice_id });
  t.is(ok.status, 200, await ok.clone().text());
  t.is(await gw.deps.wallet.balance(a.id), GRANT - CLONE - [...text].length * HD);
  const stolen = await post(b.key, '/v1/audio/speech', { model: 'speech-2-5-hd', text, voice_id: v.voice_id });
  t.is(stolen.status, 400);
  t.is(((await stolen.json()) as any).error.param, 'voice_id');
  t.is(await gw.deps.wallet.balance(b.id), GRANT);
});

test('validation: public audio_url, speech preview model, voice model; nothing charged', async (t) => {
  const a = await account();
  const cases: Array<[unknown, number, string, string?]> = [
    [{ name: 'x' }, 400, 'invalid_request', 'audio_url'],
    [{ audio_url: 'file:///tmp/a.mp3' }, 400, 'invalid_request', 'audio_url'],
    [{ audio_url: 'http://localhost/a.mp3' }, 400, 'invalid_request', 'audio_url'],
    [{ ...SAMPLE, name: 'n'.repeat(51) }, 400, 'invalid_request', 'name'],
    [{ ...SAMPLE, text: 'hi', preview_model: 'suno-v4-5' }, 400, 'invalid_request', 'preview_model'],
    [{ ...SAMPLE, model: 'speech-2-5-hd' }, 503, 'no_channel_available'],
    [{ ...SAMPLE, model: 'nope' }, 400, 'model_not_found'],
  ];
  for (const [body, status, code, param] of cases) {
    const r = await post(a.key, '/v1/audio/voices', body);
    t.is(r.status, status, JSON.stringify(body));
    const e = ((await r.json()) as any).error;
    t.is(e.code, code);
    if (param) t.is(e.param, param);
  }
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
});

test.serial('clone failure on every channel: 502, full refund, the voice is not usable', async (t) => {
  const a = await account();
  for (const channel of ['minimax-a', 'minimax-b', 'minimax-c']) await gw.control('POST', '/media/faults', { channel, fault: { type: 'fail' }, times: 1, match: '/v1/voice_clone' });
  const r = await post(a.key, '/v1/audio/voices', SAMPLE);
  t.is(r.status, 502);
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
  const list = (await (await get(a.key, '/v1/audio/voices')).json()) as { cloned: Array<Record<string, any>> };
  t.is(list.cloned.length, 1);
  t.is(list.cloned[0].status, 'failed');
  t.truthy(list.cloned[0].error);
  const speak = await post(a.key, '/v1/audio/speech', { model: 'speech-2-5-hd', text: 'hi', voice_id: list.cloned[0].voice_id });
  t.is(speak.status, 400);
});

test.serial('clone refused by the vendor (base_resp 2013): 400, not charged', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'minimax-a', fault: { type: 'submit_status', status: 200, body: { base_resp: { status_code: 2013, status_msg: 'invalid params, audio too short' } } }, times: 1, match: '/v1/voice_clone' });
  const r = await post(a.key, '/v1/audio/voices', SAMPLE);
  t.is(r.status, 400);
  t.regex(((await r.json()) as any).error.message, /audio too short/);
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
});

test.serial('a voice cloned on the second channel is spoken on that channel only', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'minimax-a', fault: { type: 'submit_status', status: 503 }, times: 1, match: '/v1/voice_clone' });
  const v = (await (await post(a.key, '/v1/audio/voices', SAMPLE)).json()) as Record<string, any>;
  t.is((await gw.deps.db.Task.findById(v.voice_id).lean())?.upstream?.channel, 'minimax-b');
  const text = 'Pinned to the channel that holds the voice.';
  const r = await post(a.key, '/v1/audio/speech', { model: 'speech-2-5-hd', text, voice_id: v.voice_id });
  t.is(r.status, 200, await r.clone().text());
  const id = ((await r.json()) as any).id;
  t.is((await gw.deps.db.Task.findById(id).lean())?.upstream?.channel, 'minimax-b');
  t.false((await upstream('minimax-a', '/v1/t2a_v2')).some((b) => b.text === text));
  t.true((await upstream('minimax-b', '/v1/t2a_v2')).some((b) => b.text === text && b.voice_setting.voice_id === v.voice_id));
  t.is(await gw.deps.wallet.balance(a.id), GRANT - CLONE - [...text].length * HD);
});

test('idempotency: a replayed clone is the same voice, one charge', async (t) => {
  const a = await account();
  const r1 = await post(a.key, '/v1/audio/voices', SAMPLE, { 'Idempotency-Key': 'voice-1' });
  const r2 = await post(a.key, '/v1/audio/voices', SAMPLE, { 'Idempotency-Key': 'voice-1' });
  t.is(r2.headers.get('idempotency-replayed'), 'true');
  t.is(await r2.text(), await r1.text());
  t.is(await gw.deps.wallet.balance(a.id), GRANT - CLONE);
});
