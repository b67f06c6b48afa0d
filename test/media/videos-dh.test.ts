import test from 'ava';
import { startKit, credits, GRANT, insertTask, type Kit } from './videos-kit';

/** Digital-human video, lip-sync and motion transfer on POST /v1/videos/generations (spec 2 section 4.4, 7.4). */
let k: Kit;
test.before(async () => {
  k = await startKit();
});
test.after.always(async () => k?.gw.close());

const AUDIO = 'https://cdn.example.com/speech.mp3?dur=7';
const SOURCE = 'https://cdn.example.com/source.mp4?dur=9';
const avatarBody = (extra: Record<string, unknown> = {}) => ({ model: 'dh-avatar', avatar: 'preset_anna', audio_url: AUDIO, duration: 20, ...extra });
const lipsyncBody = (extra: Record<string, unknown> = {}) => ({ model: 'dh-lipsync', source_video_url: SOURCE, audio_url: AUDIO, duration: 15, ...extra });
const person = (i: number) => ({ type: 'image_url', image_url: { url: `https://cdn.example.com/p${i}.jpg` } });
const motionBody = (extra: Record<string, unknown> = {}) => ({ model: 'dh-motion', source_video_url: SOURCE, content: [person(1), person(2)], face_count: 2, duration: 10, ...extra });

/** Digital-human refusals: 400 invalid_request_error (the digital-human dialect), nothing charged. */
async function refused(t: any, body: Record<string, unknown>, param?: string, opts: { code?: string; status?: number; accountId?: string; key?: string } = {}) {
  const a = opts.key ? { id: opts.accountId!, key: opts.key } : await k.account();
  const r = await k.post(a.key, body);
  const json = (await r.json()) as { error: { code: string; param?: string; type: string } };
  t.is(r.status, opts.status ?? 400, JSON.stringify(json));
  t.is(json.error.code, opts.code ?? 'invalid_request_error');
  if (param !== undefined) t.is(json.error.param, param);
  t.is(await k.balance(a.id), GRANT);
}

// ---- dh-avatar ----
test('dh-avatar: missing avatar is 400', (t) => refused(t, avatarBody({ avatar: undefined }), 'avatar'));
test('dh-avatar: an avatar that does not exist is 400', (t) => refused(t, avatarBody({ avatar: 'task_not_mine' }), 'avatar'));
test('dh-avatar: another account\'s avatar is 400', async (t) => {
  const other = await k.account();
  await insertTask(k, { _id: 'task_av_other', account_id: other.id, kind: 'avatar', endpoint: 'avatars', state: 'succeeded', extra: { avatar_id: 'av_9' } });
  await refused(t, avatarBody({ avatar: 'task_av_other' }), 'avatar');
});
test('dh-avatar: an avatar still pending is 400', async (t) => {
  const a = await k.account();
  await insertTask(k, { _id: 'task_av_pending', account_id: a.id, kind: 'avatar', endpoint: 'avatars', state: 'running' });
  await refused(t, avatarBody({ avatar: 'task_av_pending' }), 'avatar', { accountId: a.id, key: a.key });
});
test('dh-avatar: a failed avatar is 400', async (t) => {
  const a = await k.account();
  await insertTask(k, { _id: 'task_av_failed', account_id: a.id, kind: 'avatar', endpoint: 'avatars', state: 'failed' });
  await refused(t, avatarBody({ avatar: 'task_av_failed' }), 'avatar', { accountId: a.id, key: a.key });
});
test('dh-avatar: both audio_url and voice + text is 400', (t) => refused(t, avatarBody({ voice: 'female-shaonv', text: 'hello' }), 'audio_url'));
test('dh-avatar: neither audio_url nor voice + text is 400', (t) => refused(t, avatarBody({ audio_url: undefined }), 'audio_url'));
test('dh-avatar: voice without text is 400', (t) => refused(t, avatarBody({ audio_url: undefined, voice: 'female-shaonv' }), 'text'));
test('dh-avatar: text without voice is 400', (t) => refused(t, avatarBody({ audio_url: undefined, text: 'hello there' }), 'voice'));
test('dh-avatar: text above 10000 characters is 400', (t) => refused(t, avatarBody({ audio_url: undefined, voice: 'female-shaonv', text: '字'.repeat(10001) }), 'text'));
test('dh-avatar: an unknown voice is 400', (t) => refused(t, avatarBody({ audio_url: undefined, voice: 'voice_nobody', text: 'hello there' }), 'voice'));
test('dh-avatar: a title above 20 characters is 400', (t) => refused(t, avatarBody({ title: 'x'.repeat(21) }), 'title'));
test('dh-avatar: missing duration is 400', (t) => refused(t, avatarBody({ duration: undefined }), 'duration'));
test('dh-avatar: an audio_url that is not public http(s) is 400', (t) => refused(t, avatarBody({ audio_url: 'http://localhost/a.mp3' }), 'audio_url'));

test('dh-avatar: a bad key is 401 authentication_error', async (t) => {
  const r = await fetch(`${k.gw.url}/v1/videos/generations`, { method: 'POST', headers: { authorization: 'Bearer sk-nope', 'content-type': 'application/json' }, body: JSON.stringify(avatarBody()) });
  t.is(r.status, 401);
  const e = ((await r.json()) as any).error;
  t.is(e.code, 'authentication_error');
  t.is(e.type, 'authentication_error');
});
test('dh-avatar: a key not allowed the model is 403 model_not_allowed', async (t) => {
  const a = await k.account({ allowed_models: ['seedance-1-0-pro'] });
  await refused(t, avatarBody(), 'model', { accountId: a.id, key: a.key, code: 'model_not_allowed', status: 403 });
});
test('dh-avatar: a reservation above the balance is 402 quota_exceeded', (t) => refused(t, avatarBody({ duration: 3600 }), undefined, { code: 'quota_exceeded', status: 402 }));

test('dh-avatar with a preset and audio: reserve duration, settle the audio\'s seconds', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, avatarBody({ title: 'Launch day' }));
  t.is(sub.status, 'queued');
  t.is((await k.task(sub.id)).reserved_nano, 20 * credits('0.1'));
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'succeeded');
  t.is(body.duration, 7);
  t.true(body.video_url.includes('.mp4'));
  t.is(body.usage.billed_seconds, 7);
  t.false('progress' in body);
  t.is(await k.balance(a.id), GRANT - 7 * credits('0.1'));
});

test('dh-avatar: an output longer than the reserved duration is charged its actual seconds, the shortfall after the hold', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, avatarBody({ duration: 2 }));
  t.is((await k.task(sub.id)).reserved_nano, 2 * credits('0.1'));
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'succeeded');
  t.is(body.duration, 7);
  t.is(body.usage.billed_seconds, 7);
  t.is(body.usage.cost, '0.70');
  t.is(await k.balance(a.id), GRANT - 7 * credits('0.1'));
  await k.gw.deps.usage.flush();
  const row = (await k.gw.deps.db.Usage.findOne({ task_id: sub.id }).lean()) as { unit_count: number; cost_nano: number } | null;
  t.is(row?.unit_count, 7);
  t.is(row?.cost_nano, 7 * credits('0.1'));
});

test.serial('dh-avatar with a ready avatar of the account and a preset voice: the upstream avatar id is sent, on its channel', async (t) => {
  const a = await k.account();
  await insertTask(k, { _id: 'task_av_ready', account_id: a.id, kind: 'avatar', endpoint: 'avatars', state: 'succeeded', extra: { avatar_id: 'av_00000042' }, channel: 'dh-b' });
  const before = (await k.upstreamBodies('dh-b')).length;
  const text = 'Welcome to the launch of our new product line, thank you.'; // 57 chars -> 4 s
  const sub = await k.submit(a.key, avatarBody({ avatar: 'task_av_ready', audio_url: undefined, voice: 'female-shaonv', text }));
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'succeeded');
  const sent = (await k.upstreamBodies('dh-b')).slice(before);
  t.is(sent.length, 1);
  t.like(sent[0], { kind: 'avatar_video', model: 'dh-avatar', avatar: 'av_00000042', voice: 'female-shaonv', text });
  t.false('duration' in sent[0]);
  t.false('pin_channel' in sent[0]);
  t.is((await k.task(sub.id)).upstream?.channel, 'dh-b');
  t.is(await k.balance(a.id), GRANT - 4 * credits('0.1'));
});

test('dh-avatar with a cloned voice of the account', async (t) => {
  const a = await k.account();
  await insertTask(k, { _id: 'task_voice_mine', account_id: a.id, kind: 'voice', endpoint: 'voices', state: 'succeeded' });
  const sub = await k.submit(a.key, avatarBody({ audio_url: undefined, voice: 'task_voice_mine', text: 'fifteen chars!!' }));
  t.is((await k.final(a.key, sub.id)).status, 'succeeded');
  t.is(await k.balance(a.id), GRANT - 1 * credits('0.1'));
});

// ---- lip-sync ----
test('lip-sync: missing source_video_url is 400', (t) => refused(t, lipsyncBody({ source_video_url: undefined }), 'source_video_url'));
test('lip-sync: missing audio_url is 400', (t) => refused(t, lipsyncBody({ audio_url: undefined }), 'audio_url'));
test('lip-sync: a non-public audio_url is 400', (t) => refused(t, lipsyncBody({ audio_url: 'http://10.0.0.2/a.mp3' }), 'audio_url'));
test('lip-sync: missing duration is 400', (t) => refused(t, lipsyncBody({ duration: undefined }), 'duration'));

for (const [model, price] of [['dh-lipsync', '0.05'], ['dh-lipsync-pro', '0.1'], ['dh-lipsync-max', '0.2']] as const) {
  test(`${model}: reserve the duration at its tier price, settle the audio's seconds`, async (t) => {
    const a = await k.account();
    const sub = await k.submit(a.key, lipsyncBody({ model }));
    t.is((await k.task(sub.id)).reserved_nano, 15 * credits(price));
    const body = await k.final(a.key, sub.id);
    t.is(body.duration, 7);
    t.is(await k.balance(a.id), GRANT - 7 * credits(price));
  });
}

// ---- motion ----
test('motion: no person image is 400', (t) => refused(t, motionBody({ content: [], face_count: undefined }), 'content'));
test('motion: more than 7 person images is 400', (t) => refused(t, motionBody({ content: [1, 2, 3, 4, 5, 6, 7, 8].map(person), face_count: undefined }), 'content'));
test('motion: a content item that is not an image is 400', (t) => refused(t, motionBody({ content: [{ type: 'text', text: 'hi' }], face_count: undefined }), 'content.0.type'));
test('motion: face_count above 7 is 400', (t) => refused(t, motionBody({ face_count: 8 }), 'face_count'));
test('motion: face_count not equal to the image count is 400', (t) => refused(t, motionBody({ face_count: 1 }), 'face_count'));
test('motion: an unknown resolution is 400', (t) => refused(t, motionBody({ resolution: '1080p' }), 'resolution'));
test('motion: missing duration is 400', (t) => refused(t, motionBody({ duration: undefined }), 'duration'));
test('motion: missing source_video_url is 400', (t) => refused(t, motionBody({ source_video_url: undefined }), 'source_video_url'));

test('motion: standard tier by default; settled on the source length', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, motionBody());
  t.is((await k.task(sub.id)).reserved_nano, 10 * credits('0.15'));
  t.is((await k.final(a.key, sub.id)).duration, 9);
  t.is(await k.balance(a.id), GRANT - 9 * credits('0.15'));
});

test.serial('motion: resolution max decides the price; the images go upstream as a list', async (t) => {
  const a = await k.account();
  const before = (await k.upstreamBodies('dh-a')).length;
  const sub = await k.submit(a.key, motionBody({ resolution: 'max', face_count: undefined }));
  t.is((await k.task(sub.id)).reserved_nano, 10 * credits('0.3'));
  await k.final(a.key, sub.id);
  const sent = (await k.upstreamBodies('dh-a')).slice(before);
  t.like(sent[0], { kind: 'motion', resolution: 'max', face_count: 2, images: ['https://cdn.example.com/p1.jpg', 'https://cdn.example.com/p2.jpg'] });
  t.is(await k.balance(a.id), GRANT - 9 * credits('0.3'));
});

test('motion: fast tier', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, motionBody({ resolution: 'fast' }));
  await k.final(a.key, sub.id);
  t.is(await k.balance(a.id), GRANT - 9 * credits('0.08'));
});

// ---- outcomes ----
test.serial('digital-human: actual seconds from the duration fault', async (t) => {
  const a = await k.account();
  await k.fault('dh-a', { type: 'duration', seconds: 12 }, 1);
  const sub = await k.submit(a.key, lipsyncBody());
  t.is((await k.final(a.key, sub.id)).duration, 12);
  t.is(await k.balance(a.id), GRANT - 12 * credits('0.05'));
});

test.serial('digital-human: upstream failure is failed with a full refund', async (t) => {
  const a = await k.account();
  await k.fault('dh-a', { type: 'fail' }, 1);
  const sub = await k.submit(a.key, avatarBody());
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'failed');
  t.is(body.error.code, 'generation_failed');
  t.is(await k.balance(a.id), GRANT);
});

test.serial('digital-human: expiry is expired with a full refund', async (t) => {
  const a = await k.account();
  await k.fault('dh-a', { type: 'expire' }, 1);
  const sub = await k.submit(a.key, motionBody());
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'expired');
  t.is(body.error.code, 'task_expired');
  t.is(await k.balance(a.id), GRANT);
});

test.serial('digital-human: 5xx on channel a is served by channel b', async (t) => {
  const a = await k.account();
  await k.fault('dh-a', { type: 'submit_status', status: 502 }, 1);
  const sub = await k.submit(a.key, lipsyncBody());
  t.is((await k.final(a.key, sub.id)).status, 'succeeded');
  t.is((await k.task(sub.id)).upstream?.channel, 'dh-b');
  t.is(await k.balance(a.id), GRANT - 7 * credits('0.05'));
});

test('digital-human tasks are listed with the videos', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, lipsyncBody());
  await k.final(a.key, sub.id);
  const list = (await (await k.get(a.key, '/v1/videos/generations?status=succeeded')).json()) as { data: Array<{ id: string; model: string }> };
  t.deepEqual(list.data.map((x) => [x.id, x.model]), [[sub.id, 'dh-lipsync']]);
});
