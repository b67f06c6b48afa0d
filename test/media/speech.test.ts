import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';

const GRANT = parseCredits('40.44');
const HD = parseCredits('0.0001');
const TURBO = parseCredits('0.00006');
const CHANNELS = ['minimax-a', 'minimax-b', 'minimax-c'];

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { simulator: true, worker: true, mediaDelayMs: 0 });
});
test.after.always(async () => gw?.close());

const post = (key: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const get = (key: string, path: string) => fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
const speak = (key: string, body: unknown, headers: Record<string, string> = {}) => post(key, '/v1/audio/speech', body, headers);

async function account() {
  const a = await gw.newAccount();
  return { id: a.id, key: (await gw.newKey(a.id)).key };
}

async function final(key: string, id: string): Promise<Record<string, any>> {
  for (let i = 0; i < 300; i++) {
    const body = (await (await get(key, `/v1/audio/speech/${id}`)).json()) as Record<string, any>;
    if (body.status !== 'pending') return body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`speech ${id} did not finish`);
}

async function upstream(channel: string, path: string): Promise<Array<Record<string, any>>> {
  const r = await gw.control('GET', `/media/tasks?channel=${channel}`);
  return (r.tasks as Array<{ path: string; body: Record<string, any> }>).filter((x) => x.path === path).map((x) => x.body);
}

const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(3).trim(); // 134 characters
const SPEECH = { model: 'speech-2-5-hd', text: TEXT, voice_id: 'male-qn-qingse' };

test('sync (default): audio link and metadata, charged per character', async (t) => {
  t.is([...TEXT].length, 134);
  const a = await account();
  const r = await speak(a.key, { ...SPEECH, speed: 1.2, format: 'wav', sample_rate: 24000 });
  t.is(r.status, 200, await r.clone().text());
  t.truthy(r.headers.get('x-gateway-trace'));
  const body = (await r.json()) as Record<string, any>;
  t.is(body.object, 'audio.speech');
  t.is(body.status, 'succeeded');
  t.is(body.model, 'speech-2-5-hd');
  t.false(body.async);
  t.true(body.audio_url.startsWith('http'));
  t.is(body.format, 'wav');
  t.is(body.audio_length_ms, Math.round((134 / 15) * 1000));
  t.is(body.usage.characters, 134);
  t.is(body.error, null);
  t.is(await gw.deps.wallet.balance(a.id), GRANT - 134 * HD);
  const usage = await gw.deps.db.Usage.findById(body.id).lean();
  t.is(usage?.unit_type, 'character');
  t.is(usage?.unit_count, 134);
  t.is(usage?.cost_nano, 134 * HD);
  // MiniMax T2A upstream
  const sent = (await upstream('minimax-a', '/v1/t2a_v2')).find((b) => b.text === TEXT && b.audio_setting?.format === 'wav')!;
  t.is(sent.model, 'speech-2.5-hd-preview');
  t.is(sent.voice_setting.voice_id, 'male-qn-qingse');
  t.is(sent.voice_setting.speed, 1.2);
  t.is(sent.audio_setting.sample_rate, 24000);
  t.is(sent.output_format, 'url');
  // the sync task is a task like any other
  const again = (await (await get(a.key, `/v1/audio/speech/${body.id}`)).json()) as Record<string, any>;
  t.is(again.status, 'succeeded');
  t.is(again.audio_url, body.audio_url);
});

test('characters are code points; the turbo model has its own price', async (t) => {
  const a = await account();
  const text = '你好，世界！🙂 hi';
  t.is([...text].length, 10);
  const r = await speak(a.key, { model: 'speech-2-5-turbo', text, voice_id: 'female-shaonv' });
  t.is(r.status, 200);
  t.is(((await r.json()) as any).usage.characters, 10);
  t.is(await gw.deps.wallet.balance(a.id), GRANT - 10 * TURBO);
});

test('async: pending at once, then succeeded; charged per character', async (t) => {
  const a = await account();
  const r = await speak(a.key, { ...SPEECH, async: true });
  t.is(r.status, 200);
  const sub = (await r.json()) as Record<string, any>;
  t.is(sub.status, 'pending');
  t.true(sub.async);
  t.is(sub.audio_url, null);
  t.is(await gw.deps.wallet.balance(a.id), GRANT - 134 * HD);
  const done = await final(a.key, sub.id);
  t.is(done.status, 'succeeded');
  t.true(done.audio_url.startsWith('http'));
  t.is(done.usage.characters, 134);
  t.is(await gw.deps.wallet.balance(a.id), GRANT - 134 * HD);
  t.is((await upstream('minimax-a', '/v1/t2a_async_v2')).filter((b) => b.text === TEXT).length >= 1, true);
});

test('async takes up to 50000 characters, sync up to 10000', async (t) => {
  const a = await account();
  const long = 'a'.repeat(10_001);
  const sync = await speak(a.key, { ...SPEECH, text: long });
  t.is(sync.status, 400);
  t.is(((await sync.json()) as any).error.param, 'text');
  const ok = await speak(a.key, { ...SPEECH, text: long, async: true });
  t.is(ok.status, 200);
  const done = await final(a.key, ((await ok.json()) as any).id);
  t.is(done.usage.characters, 10_001);
  const tooLong = await speak(a.key, { ...SPEECH, text: 'a'.repeat(50_001), async: true });
  t.is(tooLong.status, 400);
  t.is(await gw.deps.wallet.balance(a.id), GRANT - 10_001 * HD);
});

test('validation: 400 naming the field; model errors; nothing charged', async (t) => {
  const a = await account();
  const cases: Array<[unknown, number, string, string?]> = [
    [{ text: 'hi', voice_id: 'male-qn-qingse' }, 400, 'invalid_request', 'model'],
    [{ model: 'speech-2-5-hd', voice_id: 'male-qn-qingse' }, 400, 'invalid_request', 'text'],
    [{ ...SPEECH, text: '' }, 400, 'invalid_request', 'text'],
    [{ model: 'speech-2-5-hd', text: 'hi' }, 400, 'invalid_request', 'voice_id'],
    [{ ...SPEECH, voice_id: 'no-such-voice' }, 400, 'invalid_request', 'voice_id'],
    [{ ...SPEECH, speed: 3 }, 400, 'invalid_request', 'speed'],
    [{ ...SPEECH, vol: 0 }, 400, 'invalid_request', 'vol'],
    [{ ...SPEECH, pitch: 13 }, 400, 'invalid_request', 'pitch'],
    [{ ...SPEECH, emotion: 'bored' }, 400, 'invalid_request', 'emotion'],
    [{ ...SPEECH, format: 'ogg' }, 400, 'invalid_request', 'format'],
    [{ ...SPEECH, sample_rate: 12345 }, 400, 'invalid_request', 'sample_rate'],
    [{ ...SPEECH, bitrate: 1 }, 400, 'invalid_request', 'bitrate'],
    [{ ...SPEECH, channel: 3 }, 400, 'invalid_request', 'channel'],
    [{ ...SPEECH, async: 'yes' }, 400, 'invalid_request', 'async'],
    [{ ...SPEECH, model: 'speech-9' }, 400, 'model_not_found'],
    [{ ...SPEECH, model: 'suno-v4-5' }, 503, 'no_channel_available'],
  ];
  for (const [body, status, code, param] of cases) {
    const r = await speak(a.key, body);
    t.is(r.status, status, JSON.stringify(body).slice(0, 100));
    const e = ((await r.json()) as any).error;
    t.is(e.code, code, JSON.stringify(body).slice(0, 100));
    if (param) t.is(e.param, param);
  }
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
});

test('list: status from pending,succeeded,failed,all, newest first; others\' tasks are 404', async (t) => {
  const a = await account();
  const first = ((await (await speak(a.key, SPEECH)).json()) as any).id;
  const second = ((await (await speak(a.key, { ...SPEECH, async: true })).json()) as any).id;
  await final(a.key, second);
  const all = (await (await get(a.key, '/v1/audio/speech')).json()) as { data: Array<{ id: string }>; next_cursor: null };
  t.deepEqual(all.data.map((x) => x.id), [second, first]);
  t.is(((await (await get(a.key, '/v1/audio/speech?status=succeeded')).json()) as any).data.length, 2);
  t.is(((await (await get(a.key, '/v1/audio/speech?status=pending,failed')).json()) as any).data.length, 0);
  t.is(((await (await get(a.key, '/v1/audio/speech?status=all&limit=1')).json()) as any).data.length, 1);
  t.is((await get(a.key, '/v1/audio/speech?status=processing')).status, 400);
  t.is((await get(a.key, '/v1/audio/speech?limit=101')).status, 400);
  const b = await account();
  t.is((await get(b.key, `/v1/audio/speech/${first}`)).status, 404);
});

test.serial('sync failure on every channel: 502, full refund, the task shows failed', async (t) => {
  const a = await account();
  for (const channel of CHANNELS) await gw.control('POST', '/media/faults', { channel, fault: { type: 'fail' }, times: 1, match: '/v1/t2a_v2' });
  const r = await speak(a.key, SPEECH);
  t.is(r.status, 502);
  const e = ((await r.json()) as any).error;
  t.is(e.code, 'upstream_error');
  t.regex(e.message, /unknown error/);
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
  const list = (await (await get(a.key, '/v1/audio/speech?status=failed')).json()) as { data: Array<Record<string, any>> };
  t.is(list.data.length, 1);
  t.is(list.data[0].cost, '0.00');
  t.truthy(list.data[0].error);
});

test.serial('sync failure on the first channel: the next one answers', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'minimax-a', fault: { type: 'fail' }, times: 1, match: '/v1/t2a_v2' });
  const r = await speak(a.key, SPEECH);
  t.is(r.status, 200);
  const id = ((await r.json()) as any).id;
  t.is((await gw.deps.db.Task.findById(id).lean())?.upstream?.channel, 'minimax-b');
  t.is(await gw.deps.wallet.balance(a.id), GRANT - 134 * HD);
});

test.serial('a MiniMax refusal (HTTP 200, base_resp 2013) is a 400, not charged', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'minimax-a', fault: { type: 'submit_status', status: 200, body: { base_resp: { status_code: 2013, status_msg: 'invalid params, text contains unsupported markup' } } }, times: 1, match: '/v1/t2a_v2' });
  const r = await speak(a.key, SPEECH);
  t.is(r.status, 400);
  const e = ((await r.json()) as any).error;
  t.is(e.code, 'invalid_request');
  t.regex(e.message, /unsupported markup/);
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
});

test.serial('async failure and expiry: failed, full refund', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'minimax-a', fault: { type: 'fail' }, times: 1, match: '/v1/t2a_async_v2' });
  const failed = await final(a.key, ((await (await speak(a.key, { ...SPEECH, async: true })).json()) as any).id);
  t.is(failed.status, 'failed');
  t.is(failed.error.code, 'generation_failed');
  await gw.control('POST', '/media/faults', { channel: 'minimax-a', fault: { type: 'expire' }, times: 1, match: '/v1/t2a_async_v2' });
  const expired = await final(a.key, ((await (await speak(a.key, { ...SPEECH, async: true })).json()) as any).id);
  t.is(expired.status, 'failed');
  t.is(expired.error.code, 'task_expired');
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
});

test('idempotency: the sync answer replays, one charge', async (t) => {
  const a = await account();
  const r1 = await speak(a.key, SPEECH, { 'Idempotency-Key': 'speech-1' });
  t.is(r1.status, 200);
  const r2 = await speak(a.key, SPEECH, { 'Idempotency-Key': 'speech-1' });
  t.is(r2.headers.get('idempotency-replayed'), 'true');
  t.is(await r2.text(), await r1.text());
  t.is(await gw.deps.wallet.balance(a.id), GRANT - 134 * HD);
});
