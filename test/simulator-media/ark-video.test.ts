import test from 'ava';
import { simFor, download, isPng, json } from './helpers';

const TASKS = '/api/v3/contents/generations/tasks';

function body(extra: Record<string, unknown> = {}, text = 'a cat surfing a wave'): Record<string, unknown> {
  return {
    model: 'doubao-seedance-1-0-pro-250528',
    content: [
      { type: 'text', text },
      { type: 'image_url', image_url: { url: 'https://example.com/first.png' } },
    ],
    ...extra,
  };
}

test('task runs queued -> running -> succeeded; video and last frame are served', async (t) => {
  const sim = await simFor(t); // video weight 5: due after 5000 ms, queued for the first 1000
  const sub = await json(sim.post(`${sim.ch('ark')}${TASKS}`, body({ duration: 8, ratio: '9:16', resolution: '1080p', seed: 42, generate_audio: true })));
  t.deepEqual(Object.keys(sub), ['id']);
  t.regex(sub.id, /^cgt-20250601120000-[0-9a-z]{5}$/);
  const get = () => json(fetch(`${sim.ch('ark')}${TASKS}/${sub.id}`));
  const q = await get();
  t.is(q.status, 'queued');
  t.is(q.content, undefined);
  t.is(q.progress, undefined, 'the plain tier does not report progress');
  t.is(q.created_at, Math.floor(sim.clock.now / 1000));
  sim.clock.advance(2500);
  const r = await get();
  t.is(r.status, 'running');
  t.is(r.error, null);
  sim.clock.advance(2500);
  const s = await get();
  t.is(s.status, 'succeeded');
  t.is(s.model, 'doubao-seedance-1-0-pro-250528');
  t.is(s.duration, 8);
  t.is(s.ratio, '9:16');
  t.is(s.resolution, '1080p');
  t.is(s.seed, 42);
  t.is(s.framespersecond, 24);
  t.is(s.generate_audio, true);
  t.is(s.updated_at, Math.floor(sim.clock.now / 1000));
  const tokens = Math.floor((1080 * 1920 * 24 * 8) / 1024);
  t.deepEqual(s.usage, { completion_tokens: tokens, total_tokens: tokens });
  const video = await download(s.content.video_url);
  t.is(video.status, 200);
  t.is(video.type, 'video/mp4');
  t.is(video.bytes.subarray(4, 8).toString('ascii'), 'ftyp');
  const frame = await download(s.content.last_frame_url);
  t.is(frame.type, 'image/png');
  t.true(isPng(frame.bytes));
  t.regex(s.content.video_url, /\?expires=\d+$/);
});

test('duration: body field, then --dur text flag, else 5 s; other text flags apply too', async (t) => {
  const sim = await simFor(t, { baseDelayMs: 0 });
  const submit = async (b: Record<string, unknown>) => {
    const { id } = await json(sim.post(`${sim.ch('ark')}${TASKS}`, b));
    return json(fetch(`${sim.ch('ark')}${TASKS}/${id}`));
  };
  t.is((await submit(body({ duration: 10 }))).duration, 10);
  const flagged = await submit(body({}, 'a dog running --rs 480p --rt 1:1 --dur 7 --seed 9'));
  t.is(flagged.duration, 7);
  t.is(flagged.resolution, '480p');
  t.is(flagged.ratio, '1:1');
  t.is(flagged.seed, 9);
  t.is(flagged.usage.completion_tokens, Math.floor((480 * 480 * 24 * 7) / 1024));
  const plain = await submit(body());
  t.is(plain.duration, 5);
  t.is(plain.resolution, '720p');
  t.is(plain.ratio, '16:9');
  t.is(typeof plain.seed, 'number');
});

test('progress tier: model ids containing "progress" and configured models report an integer', async (t) => {
  const sim = await simFor(t, { progressModels: ['seedance-lite-x'] });
  for (const model of ['seedance-progress-pro', 'seedance-lite-x']) {
    const { id } = await json(sim.post(`${sim.ch('ark-p')}${TASKS}`, { ...body(), model }));
    const get = () => json(fetch(`${sim.ch('ark-p')}${TASKS}/${id}`));
    t.is((await get()).progress, 0);
    sim.clock.advance(2000);
    t.is((await get()).progress, 40);
    sim.clock.advance(3000);
    const done = await get();
    t.is(done.status, 'succeeded');
    t.is(done.progress, 100);
  }
});

test('validation errors use the Ark error shape', async (t) => {
  const sim = await simFor(t);
  const url = `${sim.ch('ark-v')}${TASKS}`;
  const cases: Array<[unknown, string]> = [
    [{ content: [{ type: 'text', text: 'x' }] }, 'model'],
    [{ model: 'm' }, 'content'],
    [{ model: 'm', content: [{ type: 'image_url', image_url: {} }] }, 'content.image_url'],
    [{ model: 'm', content: [{ type: 'hologram' }] }, 'content.type'],
    [{ model: 'm', content: [{ type: 'text', text: 'x' }], duration: -1 }, 'duration'],
  ];
  for (const [b, param] of cases) {
    const res = await sim.post(url, b);
    t.is(res.status, 400);
    const { error } = await json(res);
    t.is(error.code, 'InvalidParameter');
    t.is(error.type, 'BadRequest');
    t.is(error.param, param);
  }
  const missing = await fetch(`${url}/cgt-nope`);
  t.is(missing.status, 404);
  t.is((await json(missing)).error.code, 'ResourceNotFound');
});

test('faults: fail, expire, hang, poll_fail, duration, fewer_outputs 0', async (t) => {
  const sim = await simFor(t);
  const ch = 'ark-f';
  const submit = async () => (await json(sim.post(`${sim.ch(ch)}${TASKS}`, body({ duration: 10 })))).id as string;
  const get = (id: string) => fetch(`${sim.ch(ch)}${TASKS}/${id}`);
  await sim.control.fault(ch, { type: 'fail' }, { times: 1 });
  const failed = await submit();
  await sim.control.fault(ch, { type: 'expire' }, { times: 1 });
  const expired = await submit();
  await sim.control.fault(ch, { type: 'hang' }, { times: 1 });
  const hung = await submit();
  await sim.control.fault(ch, { type: 'poll_fail', count: 3 }, { times: 1 });
  const flaky = await submit();
  await sim.control.fault(ch, { type: 'duration', seconds: 6 }, { times: 1 });
  const shorter = await submit();
  await sim.control.fault(ch, { type: 'fewer_outputs', count: 0 }, { times: 1 });
  const empty = await submit();
  sim.clock.advance(86_400_000 - 1);
  const f = await json(get(failed));
  t.is(f.status, 'failed');
  t.is(f.error.code, 'InternalServiceError');
  t.is(f.content, undefined);
  const e = await json(get(expired));
  t.is(e.status, 'expired');
  t.is(e.error.code, 'TaskExpired');
  t.is((await json(get(hung))).status, 'running');
  for (let i = 0; i < 3; i++) {
    const r = await get(flaky);
    t.is(r.status, 500);
    t.is((await json(r)).error.code, 'InternalServiceError');
  }
  t.is((await json(get(flaky))).status, 'succeeded');
  const d = await json(get(shorter));
  t.is(d.duration, 6);
  t.is(d.usage.completion_tokens, Math.floor((1280 * 720 * 24 * 6) / 1024));
  const z = await json(get(empty));
  t.is(z.status, 'succeeded');
  t.deepEqual(z.content, {});
  t.is(z.usage.completion_tokens, 0);
});

test('result links are valid 24 hours', async (t) => {
  const sim = await simFor(t, { baseDelayMs: 0 });
  const { id } = await json(sim.post(`${sim.ch('ark-l')}${TASKS}`, body()));
  const s = await json(fetch(`${sim.ch('ark-l')}${TASKS}/${id}`));
  const expires = Number(new URL(s.content.video_url).searchParams.get('expires'));
  t.is(expires, Math.floor((sim.clock.now + 86_400_000) / 1000));
  sim.clock.advance(86_400_000 - 1000);
  t.is((await download(s.content.video_url)).status, 200);
  sim.clock.advance(1000);
  const gone = await download(s.content.video_url);
  t.is(gone.status, 403);
  t.regex(gone.bytes.toString(), /Request has expired/);
});

test('cancel a queued task, refuse a running one, delete a finished one; list newest first', async (t) => {
  const sim = await simFor(t);
  const ch = 'ark-c';
  const a = (await json(sim.post(`${sim.ch(ch)}${TASKS}`, body()))).id;
  const del = (id: string) => fetch(`${sim.ch(ch)}${TASKS}/${id}`, { method: 'DELETE' });
  t.is((await del(a)).status, 200);
  t.is((await json(fetch(`${sim.ch(ch)}${TASKS}/${a}`))).status, 'cancelled');
  const b = (await json(sim.post(`${sim.ch(ch)}${TASKS}`, body()))).id;
  sim.clock.advance(2000);
  const refused = await del(b);
  t.is(refused.status, 409);
  const c = (await json(sim.post(`${sim.ch(ch)}${TASKS}`, body()))).id;
  sim.clock.advance(5000);
  const list = await json(fetch(`${sim.ch(ch)}${TASKS}?page_num=1&page_size=10`));
  t.is(list.total, 3);
  t.deepEqual(list.items.map((i: any) => i.id), [c, b, a]);
  const succeeded = await json(fetch(`${sim.ch(ch)}${TASKS}?filter.status=succeeded`));
  t.deepEqual(succeeded.items.map((i: any) => i.id), [c, b]);
  t.is((await del(b)).status, 200);
  t.is((await fetch(`${sim.ch(ch)}${TASKS}/${b}`)).status, 404);
});
