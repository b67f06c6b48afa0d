import test from 'ava';
import { simFor, download, isPng, json } from './helpers';

const SONG = { prompt: '[Verse]\nNeon rain on the avenue', mv: 'chirp-v4', title: 'Neon Rain', tags: 'synthwave, dreamy' };

test('music task: SUBMITTED, QUEUED, IN_PROGRESS (streaming clips), SUCCESS with 2 clips', async (t) => {
  const sim = await simFor(t); // music weight 4: due after 4000 ms
  const sub = await json(sim.post(`${sim.ch('suno')}/suno/submit/music`, SONG));
  t.is(sub.code, 'success');
  t.regex(sub.data, /^[0-9a-f]{8}-0000-4000-8000-[0-9a-f]{12}$/);
  const fetchTask = async () => (await json(fetch(`${sim.ch('suno')}/suno/fetch/${sub.data}`))).data;
  const s0 = await fetchTask();
  t.is(s0.status, 'SUBMITTED');
  t.is(s0.task_id, sub.data);
  t.is(s0.action, 'MUSIC');
  t.deepEqual(s0.data, []);
  sim.clock.advance(500);
  t.is((await fetchTask()).status, 'QUEUED');
  sim.clock.advance(1000);
  const early = await fetchTask();
  t.is(early.status, 'IN_PROGRESS');
  t.is(early.progress, '37%');
  t.deepEqual(early.data, []);
  sim.clock.advance(1000);
  const streaming = await fetchTask();
  t.is(streaming.data.length, 2);
  t.is(streaming.data[0].status, 'streaming');
  t.is(streaming.data[0].audio_url, '');
  t.is(streaming.data[0].duration, null);
  sim.clock.advance(1500);
  const done = await fetchTask();
  t.is(done.status, 'SUCCESS');
  t.is(done.fail_reason, '');
  t.is(done.finish_time, Math.floor(sim.clock.now / 1000));
  t.is(done.data.length, 2);
  t.not(done.data[0].id, done.data[1].id);
  for (const clip of done.data) {
    t.is(clip.status, 'complete');
    t.is(clip.title, 'Neon Rain');
    t.is(clip.model_name, 'chirp-v4');
    t.is(clip.tags, 'synthwave, dreamy');
    t.true(clip.duration >= 120 && clip.duration < 240);
    t.is(clip.metadata.duration, clip.duration);
    const audio = await download(clip.audio_url);
    t.is(audio.status, 200);
    t.is(audio.type, 'audio/mpeg');
    t.is(audio.bytes.subarray(0, 3).toString('ascii'), 'ID3');
    const cover = await download(clip.image_url);
    t.true(isPng(cover.bytes));
  }
  const again = await fetchTask();
  t.deepEqual(again.data.map((c: any) => c.duration), done.data.map((c: any) => c.duration), 'durations are deterministic');
});

test('submit validation and batch fetch', async (t) => {
  const sim = await simFor(t, { baseDelayMs: 0 });
  const bad = await sim.post(`${sim.ch('suno')}/suno/submit/music`, { mv: 'chirp-v4' });
  t.is(bad.status, 400);
  t.is((await json(bad)).code, 'error');
  const a = (await json(sim.post(`${sim.ch('suno')}/suno/submit/music`, { gpt_description_prompt: 'lofi beats to study to', mv: 'chirp-v3-5' }))).data;
  const b = (await json(sim.post(`${sim.ch('suno')}/suno/submit/music`, { ...SONG, make_instrumental: true }))).data;
  const batch = await json(sim.post(`${sim.ch('suno')}/suno/fetch`, { ids: [a, b, 'nope'] }));
  t.is(batch.code, 'success');
  t.deepEqual(batch.data.map((x: any) => x.task_id), [a, b]);
  t.is(batch.data[0].data[0].title, 'lofi beats to study');
  t.is(batch.data[1].data[0].metadata.make_instrumental, true);
  const missing = await fetch(`${sim.ch('suno')}/suno/fetch/nope`);
  t.is(missing.status, 404);
  t.is((await json(missing)).message, 'task_not_exist');
});

test('faults: fewer_outputs 1 of 2, duration, fail, expire, hang, poll_fail', async (t) => {
  const sim = await simFor(t);
  const ch = 'suno-f';
  const submit = async () => (await json(sim.post(`${sim.ch(ch)}/suno/submit/music`, SONG))).data as string;
  const get = (id: string) => fetch(`${sim.ch(ch)}/suno/fetch/${id}`);
  await sim.control.fault(ch, { type: 'fewer_outputs', count: 1 }, { times: 1 });
  await sim.control.fault(ch, { type: 'duration', seconds: 61.5 }, { times: 1 });
  const few = await submit();
  await sim.control.fault(ch, { type: 'fail' }, { times: 1 });
  const failed = await submit();
  await sim.control.fault(ch, { type: 'expire' }, { times: 1 });
  const expired = await submit();
  await sim.control.fault(ch, { type: 'hang' }, { times: 1 });
  const hung = await submit();
  await sim.control.fault(ch, { type: 'poll_fail', count: 1 }, { times: 1 });
  const flaky = await submit();
  sim.clock.advance(600_000);
  const f = (await json(get(few))).data;
  t.is(f.status, 'SUCCESS');
  t.is(f.data.length, 1);
  t.is(f.data[0].duration, 61.5);
  const x = (await json(get(failed))).data;
  t.is(x.status, 'FAILURE');
  t.regex(x.fail_reason, /failed/);
  t.deepEqual(x.data, []);
  const e = (await json(get(expired))).data;
  t.is(e.status, 'FAILURE');
  t.regex(e.fail_reason, /expired/);
  t.is((await json(get(hung))).data.status, 'IN_PROGRESS');
  const r = await get(flaky);
  t.is(r.status, 500);
  t.is((await json(r)).code, 'upstream_error');
  t.is((await json(get(flaky))).data.status, 'SUCCESS');
});
