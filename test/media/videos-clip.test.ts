import test from 'ava';
import { startKit, credits, GRANT, type Kit } from './videos-kit';

/** Clip editing on POST /v1/videos/generations: clip-realman, clip-mixcut, clip-news (spec 2 section 4.4). */
let k: Kit;
test.before(async () => {
  k = await startKit();
});
test.after.always(async () => k?.gw.close());

const PRICE = credits('0.02');
const mat = (type: 'image' | 'video', i = 0) => ({ type, file_url: `https://cdn.example.com/m${i}.${type === 'image' ? 'jpg' : 'mp4'}` });
const realman = (extra: Record<string, unknown> = {}) => ({ model: 'clip-realman', style_id: 'tpl_rm_vlog_01', source_video_url: 'https://cdn.example.com/talk.mp4?dur=42', ...extra });
const mixcut = (extra: Record<string, unknown> = {}) => ({ model: 'clip-mixcut', style_id: 'tpl_mix_product_01', audio_url: 'https://cdn.example.com/voice.mp3?dur=33', materials: [mat('image'), mat('video', 1)], ...extra });
const news = (extra: Record<string, unknown> = {}) => ({ model: 'clip-news', style_id: 'tpl_news_flash_01', title: 'Markets rally', materials: [mat('video'), mat('image', 1)], ...extra });

async function refused(t: any, body: Record<string, unknown>, param?: string) {
  const a = await k.account();
  const r = await k.post(a.key, body);
  const json = (await r.json()) as { error: { code: string; param?: string } };
  t.is(r.status, 400, JSON.stringify(json));
  t.is(json.error.code, 'invalid_request_error');
  if (param !== undefined) t.is(json.error.param, param);
  t.is(await k.balance(a.id), GRANT);
}

// ---- field rules ----
test('style_id is required', (t) => refused(t, realman({ style_id: undefined }), 'style_id'));
test('realman: source_video_url is required', (t) => refused(t, realman({ source_video_url: undefined }), 'source_video_url'));
test('realman: source_video_url must be public', (t) => refused(t, realman({ source_video_url: 'http://192.168.1.5/a.mp4' }), 'source_video_url'));
test('mixcut: audio_url is required', (t) => refused(t, mixcut({ audio_url: undefined }), 'audio_url'));
test('mixcut: materials are required', (t) => refused(t, mixcut({ materials: undefined }), 'materials'));
test('mixcut: an empty materials list counts as missing', (t) => refused(t, mixcut({ materials: [] }), 'materials'));
test('news: materials are required', (t) => refused(t, news({ materials: undefined }), 'materials'));
test('news: title is required', (t) => refused(t, news({ title: undefined }), 'title'));
test('materials hold at most 10 items', (t) => refused(t, news({ materials: Array.from({ length: 11 }, (_, i) => mat('image', i)) }), 'materials'));
test('a material type other than image or video is 400', (t) => refused(t, news({ materials: [{ type: 'audio', file_url: 'https://cdn.example.com/a.mp3' }] }), 'materials.0.type'));
test('a material without a public file_url is 400', (t) => refused(t, news({ materials: [{ type: 'image', file_url: 'data:image/png;base64,AAAA' }] }), 'materials.0.file_url'));
test('sound_switch must be a bool', (t) => refused(t, news({ materials: [{ ...mat('video'), sound_switch: 'on' }] }), 'materials.0.sound_switch'));
test('material_composition must be random or order', (t) => refused(t, news({ material_composition: 'shuffle' }), 'material_composition'));
test('material_composition applies to news only', (t) => refused(t, mixcut({ material_composition: 'order' }), 'material_composition'));
test('preprocess must be roughCut or sliceMerge', (t) => refused(t, realman({ preprocess: 'fullCut' }), 'preprocess'));
test('preprocess applies to realman only', (t) => refused(t, news({ preprocess: 'roughCut' }), 'preprocess'));
test('audio_url does not apply to realman', (t) => refused(t, realman({ audio_url: 'https://cdn.example.com/a.mp3' }), 'audio_url'));
test('source_video_url does not apply to news', (t) => refused(t, news({ source_video_url: 'https://cdn.example.com/a.mp4' }), 'source_video_url'));
test('bgm mode must be auto, none or custom', (t) => refused(t, realman({ bgm: { mode: 'loud' } }), 'bgm.mode'));
test('bgm custom needs a url', (t) => refused(t, realman({ bgm: { mode: 'custom' } }), 'bgm.url'));
test('bgm volume is 0 to 1', (t) => refused(t, realman({ bgm: { mode: 'auto', volume: 3 } }), 'bgm.volume'));
test('cover_url must be a public URL', (t) => refused(t, realman({ cover_url: 'cover.png' }), 'cover_url'));
test('introduce_card needs name and description', (t) => refused(t, realman({ introduce_card: { name: 'Ann' } }), 'introduce_card.description'));
test('language must be a language code', (t) => refused(t, realman({ language: 'english please' }), 'language'));
test('a duration above the limit is 400', (t) => refused(t, realman({ duration: 100000 }), 'duration'));

test('a bad key on a clip model is 401 authentication_error', async (t) => {
  const r = await fetch(`${k.gw.url}/v1/videos/generations`, { method: 'POST', headers: { authorization: 'Bearer sk-nope', 'content-type': 'application/json' }, body: JSON.stringify(news()) });
  t.is(r.status, 401);
  t.is(((await r.json()) as any).error.code, 'authentication_error');
});

// ---- money ----
test.serial('realman: reserve the 300 s clip cap, settle the source video\'s 42 s; every optional field goes upstream', async (t) => {
  const a = await k.account();
  const before = (await k.upstreamBodies('dh-a')).length;
  const extra = {
    materials: [{ ...mat('video'), sound_switch: true }], preprocess: 'sliceMerge', bgm: { mode: 'custom', url: 'https://cdn.example.com/bgm.mp3', volume: 0.3 },
    cover_url: 'https://cdn.example.com/cover.png', introduce_card: { name: 'Ann Lee', description: 'Chef' }, language: 'en', title: 'My vlog',
  };
  const sub = await k.submit(a.key, realman(extra));
  t.is((await k.task(sub.id)).reserved_nano, 300 * PRICE);
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'succeeded');
  t.is(body.duration, 42);
  t.truthy(body.content.cover_url);
  t.is(await k.balance(a.id), GRANT - 42 * PRICE);
  const sent = (await k.upstreamBodies('dh-a')).slice(before);
  t.deepEqual(sent[0], { kind: 'clip', model: 'clip-realman', style_id: 'tpl_rm_vlog_01', source_video_url: 'https://cdn.example.com/talk.mp4?dur=42', ...extra });
});

test('realman: a longer explicit duration is reserved instead of the cap', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, realman({ duration: 400 }));
  t.is((await k.task(sub.id)).reserved_nano, 400 * PRICE);
  await k.final(a.key, sub.id);
  t.is(await k.balance(a.id), GRANT - 42 * PRICE);
});

test('mixcut: settled on the audio\'s seconds', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, mixcut());
  t.is((await k.task(sub.id)).reserved_nano, 300 * PRICE);
  t.is((await k.final(a.key, sub.id)).duration, 33);
  t.is(await k.balance(a.id), GRANT - 33 * PRICE);
});

test('news: duration omitted is the upstream default 60 s; 300 s reserved', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, news({ material_composition: 'order' }));
  t.is((await k.task(sub.id)).reserved_nano, 300 * PRICE);
  t.is((await k.final(a.key, sub.id)).duration, 60);
  t.is(await k.balance(a.id), GRANT - 60 * PRICE);
});

test.serial('news: duration below 5 is clamped to 5, above 300 to 300', async (t) => {
  const a = await k.account();
  const before = (await k.upstreamBodies('dh-a')).length;
  const low = await k.submit(a.key, news({ duration: 2 }));
  t.is((await k.final(a.key, low.id)).duration, 5);
  const high = await k.submit(a.key, news({ duration: 900 }));
  t.is((await k.task(high.id)).reserved_nano, 300 * PRICE);
  t.is((await k.final(a.key, high.id)).duration, 300);
  // However far out of range: clamped, never refused.
  const huge = await k.submit(a.key, news({ duration: 100_000 }));
  t.is((await k.final(a.key, huge.id)).duration, 300);
  const sent = (await k.upstreamBodies('dh-a')).slice(before);
  t.deepEqual(sent.map((b) => b.duration), [5, 300, 300]);
  t.is(await k.balance(a.id), GRANT - 605 * PRICE);
});

test.serial('clip: the actual seconds come from the result (duration fault)', async (t) => {
  const a = await k.account();
  await k.fault('dh-a', { type: 'duration', seconds: 77 }, 1);
  const sub = await k.submit(a.key, realman());
  t.is((await k.final(a.key, sub.id)).duration, 77);
  t.is(await k.balance(a.id), GRANT - 77 * PRICE);
});

test.serial('clip: upstream failure refunds in full', async (t) => {
  const a = await k.account();
  await k.fault('dh-a', { type: 'fail' }, 1);
  const sub = await k.submit(a.key, mixcut());
  t.is((await k.final(a.key, sub.id)).status, 'failed');
  t.is(await k.balance(a.id), GRANT);
});

test.serial('clip: expiry refunds in full', async (t) => {
  const a = await k.account();
  await k.fault('dh-a', { type: 'expire' }, 1);
  const sub = await k.submit(a.key, news());
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'expired');
  t.is(await k.balance(a.id), GRANT);
});

test.serial('clip: a template of another scene is refused upstream (4xx): failed, not charged', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, news({ style_id: 'tpl_rm_vlog_01' }));
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'failed');
  t.regex(body.error.message, /cannot be used with clip-news/);
  t.is(await k.balance(a.id), GRANT);
});

test.serial('clip: 5xx on channel a is served by channel b', async (t) => {
  const a = await k.account();
  await k.fault('dh-a', { type: 'submit_status', status: 500 }, 1);
  const sub = await k.submit(a.key, realman());
  t.is((await k.final(a.key, sub.id)).status, 'succeeded');
  t.is((await k.task(sub.id)).upstream?.channel, 'dh-b');
});

test('clip: a balance below the 300 s reservation is 402', async (t) => {
  const a = await k.account();
  const r = await k.post(a.key, realman({ duration: 3000 })); // 3000 x 0.02 = 60 > 40.44
  t.is(r.status, 402);
  t.is(((await r.json()) as any).error.code, 'quota_exceeded');
});
