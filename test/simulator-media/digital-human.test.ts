import test from 'ava';
import { simFor, download, isPng, json, staysOpen } from './helpers';

const TASKS = '/dh/v1/tasks';

test('avatar_video from audio: pending, processing, succeeded; duration from ?dur=', async (t) => {
  const sim = await simFor(t); // digital_human weight 5: due after 5000 ms
  const sub = await json(sim.post(`${sim.ch('dh')}${TASKS}`, { kind: 'avatar_video', model: 'dh-avatar', avatar: 'preset_anna', audio_url: 'https://cdn.example.com/a.mp3?dur=7', title: 'Weekly update' }));
  t.regex(sub.task_id, /^dht_\d{8}$/);
  t.is(sub.status, 'pending');
  const get = () => json(fetch(`${sim.ch('dh')}${TASKS}/${sub.task_id}`));
  const p = await get();
  t.is(p.status, 'pending');
  t.is(p.progress, 0);
  t.is(p.result, null);
  t.is(p.kind, 'avatar_video');
  sim.clock.advance(3000);
  const r = await get();
  t.is(r.status, 'processing');
  t.is(r.progress, 60);
  sim.clock.advance(2000);
  const s = await get();
  t.is(s.status, 'succeeded');
  t.is(s.progress, 100);
  t.is(s.error, null);
  t.is(s.result.duration_seconds, 7);
  const video = await download(s.result.video_url);
  t.is(video.type, 'video/mp4');
  t.is(video.bytes.subarray(4, 8).toString('ascii'), 'ftyp');
  t.true(isPng((await download(s.result.cover_url)).bytes));
});

test('output seconds follow the input for every kind', async (t) => {
  const sim = await simFor(t, { baseDelayMs: 0 });
  const run = async (b: Record<string, unknown>) => {
    const res = await sim.post(`${sim.ch('dh')}${TASKS}`, b);
    t.is(res.status, 200, JSON.stringify(b));
    const { task_id } = await json(res);
    return (await json(fetch(`${sim.ch('dh')}${TASKS}/${task_id}`))).result;
  };
  const text = 'x'.repeat(46); // 46 / 15 -> 4 s
  t.is((await run({ kind: 'avatar_video', model: 'dh-avatar', avatar: 'av_1', voice: 'male-qn-qingse', text })).duration_seconds, 4);
  t.is((await run({ kind: 'avatar_video', model: 'dh-avatar', avatar: 'av_1', audio_url: 'https://x/a.mp3' })).duration_seconds, 10);
  t.is((await run({ kind: 'lipsync', model: 'dh-lipsync-pro', source_video_url: 'https://x/v.mp4?dur=30', audio_url: 'https://x/a.wav?dur=12.5' })).duration_seconds, 12.5);
  t.is((await run({ kind: 'motion', model: 'dh-motion', source_video_url: 'https://x/dance.mp4?dur=9', images: ['https://x/p1.png', 'https://x/p2.png'], face_count: 2, resolution: 'max' })).duration_seconds, 9);
  t.is((await run({ kind: 'clip', model: 'clip-realman', style_id: 'tpl_rm_vlog_01', source_video_url: 'https://x/talk.mp4?dur=95' })).duration_seconds, 95);
  const materials = [{ type: 'video', file_url: 'https://x/m1.mp4' }, { type: 'image', file_url: 'https://x/m2.png' }];
  t.is((await run({ kind: 'clip', model: 'clip-mixcut', style_id: 'tpl_mix_product_01', audio_url: 'https://x/voice.mp3?dur=41', materials })).duration_seconds, 41);
  t.is((await run({ kind: 'clip', model: 'clip-news', style_id: 'tpl_news_flash_01', title: 'Markets', materials, duration: 500 })).duration_seconds, 300);
  t.is((await run({ kind: 'clip', model: 'clip-news', style_id: 'tpl_news_flash_01', title: 'Markets', materials, duration: 2 })).duration_seconds, 5);
  const avatar = await run({ kind: 'avatar_create', model: 'dh-avatar-create', name: 'Anna', source_url: 'https://x/anna.jpg', source_kind: 'image' });
  t.regex(avatar.avatar_id, /^av_\d{8}$/);
  t.is(avatar.video_url, undefined);
  t.is(avatar.duration_seconds, undefined);
  t.is((await download(avatar.cover_url)).status, 200);
});

test('validation: 400 invalid_request with a reason', async (t) => {
  const sim = await simFor(t);
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ kind: 'teleport', model: 'x' }, /kind must be/],
    [{ kind: 'avatar_video' }, /model is required/],
    [{ kind: 'avatar_video', model: 'dh-avatar', audio_url: 'https://x/a.mp3' }, /avatar is required/],
    [{ kind: 'avatar_video', model: 'dh-avatar', avatar: 'a', audio_url: 'https://x/a.mp3', voice: 'v', text: 't' }, /not both/],
    [{ kind: 'avatar_video', model: 'dh-avatar', avatar: 'a', voice: 'v', text: 't', title: 'x'.repeat(21) }, /title/],
    [{ kind: 'lipsync', model: 'dh-lipsync', source_video_url: 'https://x/v.mp4' }, /audio_url/],
    [{ kind: 'motion', model: 'dh-motion', source_video_url: 'https://x/v.mp4', images: [] }, /1 to 7/],
    [{ kind: 'clip', model: 'clip-other', style_id: 'tpl_rm_vlog_01' }, /not a clip model/],
    [{ kind: 'clip', model: 'clip-news', style_id: 'tpl_rm_vlog_01', title: 't', materials: [] }, /cannot be used/],
    [{ kind: 'clip', model: 'clip-mixcut', style_id: 'nope' }, /style_id/],
    [{ kind: 'clip', model: 'clip-mixcut', style_id: 'tpl_mix_product_01', audio_url: 'https://x/a.mp3', materials: Array(11).fill({ type: 'image', file_url: 'https://x/i.png' }) }, /at most 10/],
    [{ kind: 'avatar_create', model: 'dh-avatar-create', name: 'A', source_url: 'file:///etc/passwd' }, /source_url/],
  ];
  for (const [b, reason] of cases) {
    const res = await sim.post(`${sim.ch('dh-v')}${TASKS}`, b);
    t.is(res.status, 400, JSON.stringify(b));
    const { error } = await json(res);
    t.is(error.code, 'invalid_request');
    t.regex(error.message, reason);
  }
  t.is((await sim.control.tasks('dh-v')).tasks.length, 0);
  const missing = await fetch(`${sim.ch('dh-v')}${TASKS}/dht_404`);
  t.is(missing.status, 404);
  t.is((await json(missing)).error.code, 'not_found');
});

test('faults: fail, expire, hang, poll_fail, duration', async (t) => {
  const sim = await simFor(t);
  const ch = 'dh-f';
  const submit = async () => (await json(sim.post(`${sim.ch(ch)}${TASKS}`, { kind: 'lipsync', model: 'dh-lipsync', source_video_url: 'https://x/v.mp4', audio_url: 'https://x/a.mp3?dur=8' }))).task_id as string;
  const get = (id: string) => fetch(`${sim.ch(ch)}${TASKS}/${id}`);
  await sim.control.fault(ch, { type: 'fail' }, { times: 1 });
  const failed = await submit();
  await sim.control.fault(ch, { type: 'expire' }, { times: 1 });
  const expired = await submit();
  await sim.control.fault(ch, { type: 'hang' }, { times: 1 });
  const hung = await submit();
  await sim.control.fault(ch, { type: 'poll_fail', count: 1 }, { times: 1 });
  const flaky = await submit();
  await sim.control.fault(ch, { type: 'duration', seconds: 3 }, { times: 1 });
  const short = await submit();
  sim.clock.advance(3_600_000);
  const f = await json(get(failed));
  t.is(f.status, 'failed');
  t.is(f.error.code, 'generation_failed');
  t.is(f.result, null);
  const e = await json(get(expired));
  t.is(e.status, 'expired');
  t.is(e.error.code, 'task_expired');
  t.is((await json(get(hung))).status, 'processing');
  t.is((await get(flaky)).status, 500);
  t.is((await json(get(flaky))).result.duration_seconds, 8);
  t.is((await json(get(short))).result.duration_seconds, 3);
});

test('avatar creation takes twice as long as a video', async (t) => {
  const sim = await simFor(t);
  const { task_id } = await json(sim.post(`${sim.ch('dh')}${TASKS}`, { kind: 'avatar_create', model: 'dh-avatar-create', name: 'Ben', source_url: 'https://x/ben.mp4', source_kind: 'video' }));
  sim.clock.advance(9999);
  t.is((await json(fetch(`${sim.ch('dh')}${TASKS}/${task_id}`))).status, 'processing');
  sim.clock.advance(1);
  t.is((await json(fetch(`${sim.ch('dh')}${TASKS}/${task_id}`))).status, 'succeeded');
});

test('transcripts: synchronous text, language and duration from the link', async (t) => {
  const sim = await simFor(t, { baseDelayMs: 0 });
  const url = `${sim.ch('dh-t')}/dh/v1/transcripts`;
  const zh = await json(sim.post(url, { url: 'https://v.douyin.com/abc/?dur=12' }));
  t.is(zh.language, 'zh');
  t.is(zh.duration_seconds, 12);
  t.true(zh.text.length >= 48);
  t.is(zh.segments.at(-1).end, 12);
  const again = await json(sim.post(url, { url: 'https://v.douyin.com/abc/?dur=12' }));
  t.is(again.text, zh.text, 'same link, same text');
  const en = await json(sim.post(url, { url: 'https://youtu.be/xyz?lang=en' }));
  t.is(en.language, 'en');
  t.is(en.duration_seconds, 30);
  t.regex(en.text, /^[A-Z]/);
  const bad = await sim.post(url, { url: 'not a link' });
  t.is(bad.status, 400);
  await sim.control.fault('dh-t', { type: 'fail' }, { times: 1 });
  const failed = await sim.post(url, { url: 'https://x/v' });
  t.is(failed.status, 422);
  t.is((await json(failed)).error.code, 'no_speech');
  await sim.control.fault('dh-t', { type: 'expire' }, { times: 1 });
  t.is((await sim.post(url, { url: 'https://x/v' })).status, 504);
  await sim.control.fault('dh-t', { type: 'duration', seconds: 4 }, { times: 1 });
  t.is((await json(sim.post(url, { url: 'https://x/v?dur=50' }))).duration_seconds, 4);
  await sim.control.fault('dh-t', { type: 'hang' }, { times: 1 });
  t.true(await staysOpen(sim.post(url, { url: 'https://x/v' })));
});

test('transcripts wait transcriptDelayMs', async (t) => {
  const sim = await simFor(t, { baseDelayMs: 0, transcriptDelayMs: 250 });
  const started = Date.now();
  const res = await sim.post(`${sim.ch('dh-t')}/dh/v1/transcripts`, { url: 'https://x/v' });
  t.is(res.status, 200);
  t.true(Date.now() - started >= 240);
});

test('clip templates: list by scene and detail with canvas and layers', async (t) => {
  const sim = await simFor(t);
  const all = await json(fetch(`${sim.ch('dh')}/dh/v1/clip-templates`));
  t.is(all.total, 8);
  const news = await json(fetch(`${sim.ch('dh')}/dh/v1/clip-templates?scene=newsMixCutting`));
  t.deepEqual(news.templates.map((x: any) => x.id), ['tpl_news_flash_01', 'tpl_news_anchor_02']);
  const realMan = await json(fetch(`${sim.ch('dh')}/dh/v1/clip-templates?scene=realMan`));
  const clean = realMan.templates.find((x: any) => x.id === 'tpl_rm_clean_02');
  t.is(clean.has_title, false);
  t.is(clean.has_persona, false);
  t.true(isPng((await download(clean.cover_url)).bytes));
  t.is((await fetch(`${sim.ch('dh')}/dh/v1/clip-templates?scene=moon`)).status, 400);
  const detail = await json(fetch(`${sim.ch('dh')}/dh/v1/clip-templates/tpl_news_anchor_02`));
  t.is(detail.has_title, true);
  t.is(detail.has_persona, true);
  t.deepEqual(detail.canvas, { width: 1080, height: 1920, fps: 25, background_color: '#101014' });
  t.true(detail.layers.some((l: any) => l.type === 'persona'));
  t.deepEqual(detail.layers.map((l: any) => l.z_index), [...detail.layers.map((l: any) => l.z_index)].sort((a: number, b: number) => a - b));
  t.is((await fetch(`${sim.ch('dh')}/dh/v1/clip-templates/nope`)).status, 404);
});
