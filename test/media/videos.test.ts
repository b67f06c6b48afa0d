import test from 'ava';
import { startKit, textVideo, credits, GRANT, type Kit } from './videos-kit';

/** Video models on the Ark content-generation API (spec 2 section 4.4). */
let k: Kit;
test.before(async () => {
  k = await startKit();
});
test.after.always(async () => k?.gw.close());

const refImages = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'image_url', image_url: { url: `https://img.example.com/${i}.png` }, role: 'reference_image' }));
const refVideo = { type: 'video_url', video_url: { url: 'https://v.example.com/clip.mp4' }, role: 'reference_video' };
const text = { type: 'text', text: 'make it move' };

async function refused(t: any, body: unknown, param?: string, code = 'invalid_request', status = 400) {
  const a = await k.account();
  const r = await k.post(a.key, body);
  const json = (await r.json()) as { error: { code: string; param?: string; message: string } };
  t.is(r.status, status, JSON.stringify(json));
  t.is(json.error.code, code);
  if (param !== undefined) t.is(json.error.param, param);
  t.is(await k.balance(a.id), GRANT);
}

// ---- content[] rules ----
test('content without a text item is 400', (t) => refused(t, { model: 'seedance-1-0-pro', content: [{ type: 'image_url', image_url: { url: 'https://x.example.com/a.png' } }] }, 'content'));
test('content missing is 400', (t) => refused(t, { model: 'seedance-1-0-pro' }, 'content'));
test('a content item of an unknown type is 400', (t) => refused(t, { model: 'seedance-1-0-pro', content: [text, { type: 'gif_url', gif_url: { url: 'https://x' } }] }, 'content.1.type'));
test('an image_url item without image_url.url is 400', (t) => refused(t, { model: 'seedance-1-0-pro', content: [text, { type: 'image_url', image_url: {} }] }, 'content.1.image_url.url'));
test('a video_url item with the wrong role is 400', (t) => refused(t, { model: 'seedance-1-0-pro', content: [text, { ...refVideo, role: 'reference_image' }] }, 'content.1.role'));
test('a reference video that is not a public http(s) URL is 400', (t) =>
  refused(t, { model: 'seedance-1-0-pro', content: [text, { ...refVideo, video_url: { url: 'ftp://v.example.com/a.mp4' } }] }, 'content.1.video_url.url'));
test('an image that is neither an http(s) URL nor a data:image URI is 400', (t) =>
  refused(t, { model: 'seedance-1-0-pro', content: [text, { type: 'image_url', image_url: { url: 'file:///etc/passwd' } }] }, 'content.1.image_url.url'));
test('more than 10 reference images on the main family is 400', (t) => refused(t, { model: 'seedance-1-0-pro', content: [text, ...refImages(11)] }, 'content'));
test('more than 30 reference images on the one family is 400', (t) => refused(t, { model: 'seedance-1-0-pro-progress', content: [text, ...refImages(31)] }, 'content'));
test('the one family takes 30 reference images', async (t) => {
  const a = await k.account();
  const r = await k.post(a.key, { model: 'seedance-1-0-pro-progress', content: [text, ...refImages(30)], duration: 5 });
  t.is(r.status, 200);
});
test('the main family takes 10 reference images and base64 first frames', async (t) => {
  const a = await k.account();
  const r = await k.post(a.key, { model: 'seedance-1-0-pro', content: [text, ...refImages(10), { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' }, role: 'first_frame' }], duration: 5 });
  t.is(r.status, 200);
});

// ---- duration, resolution, video_mode, portrait_auth ----
test('a duration that is not a whole number of seconds is 400', (t) => refused(t, textVideo('seedance-1-0-pro', { duration: 4.5 }), 'duration'));
test('a duration of 0 is 400', (t) => refused(t, textVideo('seedance-1-0-pro', { duration: 0 }), 'duration'));
test('lite tier without resolution is 400', (t) => refused(t, textVideo('seedance-1-0-lite', { duration: 5 }), 'resolution'));
test('lite tier with a resolution other than 720p/1080p is 400', (t) => refused(t, textVideo('seedance-1-0-lite', { duration: 5, resolution: '480p' }), 'resolution'));
test('token-billed model with a reference video and no resolution is 400', (t) =>
  refused(t, { model: 'seedance-1-0-pro-progress', content: [text, refVideo], duration: 5 }, 'resolution'));
test('video_mode on a model without it is 400', (t) => refused(t, { model: 'seedance-1-0-pro', content: [text, refVideo], video_mode: 'extend', duration: 5 }, 'video_mode'));
test('video_mode without a reference video is 400', (t) => refused(t, textVideo('seedance-1-0-pro-progress', { video_mode: 'rewrite', duration: 5 }), 'video_mode'));
test('video_mode extend beyond 10 s is 400', (t) =>
  refused(t, { model: 'seedance-1-0-pro-progress', content: [text, refVideo], resolution: '720p', video_mode: 'extend', duration: 11 }, 'duration'));
test('video_mode extend below 2 s is 400', (t) =>
  refused(t, { model: 'seedance-1-0-pro-progress', content: [text, refVideo], resolution: '720p', video_mode: 'extend', duration: 1 }, 'duration'));
test('an unknown video_mode is 400', (t) => refused(t, { model: 'seedance-1-0-pro-progress', content: [text, refVideo], resolution: '720p', video_mode: 'loop' }, 'video_mode'));
test('portrait_auth that is not a bool is 400', (t) => refused(t, textVideo('seedance-1-0-pro', { portrait_auth: 'yes' }), 'portrait_auth'));
test('watermark that is not a bool is 400', (t) => refused(t, textVideo('seedance-1-0-pro', { watermark: 'no' }), 'watermark'));

// ---- real-person rules ----
test('real-person models refuse base64 images', (t) =>
  refused(t, { model: 'kling-real-person-pro', content: [text, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }], duration: 5 }, 'content.1.image_url.url'));
test('real-person models refuse non-public image URLs', (t) =>
  refused(t, { model: 'kling-real-person-pro', content: [text, { type: 'image_url', image_url: { url: 'http://127.0.0.1/me.png' } }], duration: 5 }, 'content.1.image_url.url'));
test('the smallest real-person tier takes 480p and 720p only', (t) => refused(t, textVideo('kling-real-person-std', { duration: 5, resolution: '1080p' }), 'resolution'));
test('a real-person tier refuses a resolution outside its vocabulary', (t) => refused(t, textVideo('kling-real-person-pro', { duration: 5, resolution: '8k' }), 'resolution'));

// ---- model and balance refusals ----
test('unknown model is 400 model_not_found', (t) => refused(t, textVideo('no-such-video'), 'model', 'model_not_found'));
test('a model of another endpoint is 503 no_channel_available', (t) => refused(t, { model: 'gpt-image-1', content: [text] }, undefined, 'no_channel_available', 503));
test('a reservation above the balance is 402 quota_exceeded', (t) => refused(t, textVideo('kling-real-person-pro', { duration: 3600, resolution: '4k' }), undefined, 'quota_exceeded', 402));
test('a key not allowed the model is 400 model_not_allowed (general dialect)', async (t) => {
  const a = await k.account({ allowed_models: ['seedance-1-0-lite'] });
  const r = await k.post(a.key, textVideo('seedance-1-0-pro'));
  t.is(r.status, 400);
  t.is(((await r.json()) as any).error.code, 'model_not_allowed');
});
test('a bad key on a video model is 401 invalid_api_key (general dialect)', async (t) => {
  const r = await fetch(`${k.gw.url}/v1/videos/generations`, { method: 'POST', headers: { authorization: 'Bearer sk-nope', 'content-type': 'application/json' }, body: JSON.stringify(textVideo()) });
  t.is(r.status, 401);
  t.is(((await r.json()) as any).error.code, 'invalid_api_key');
});

// ---- happy paths and money ----
test('duration omitted: 12 s reserved, settled on the seconds produced', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, textVideo());
  t.deepEqual(Object.keys(sub).sort(), ['created_at', 'id', 'model', 'status']);
  t.is(sub.status, 'queued');
  t.is(sub.model, 'seedance-1-0-pro');
  t.is((await k.task(sub.id)).reserved_nano, 12 * credits('0.15'));
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'succeeded');
  t.is(body.duration, 5); // the upstream's default length
  t.is(body.usage.billed_seconds, 5);
  t.is(body.usage.cost, '0.75');
  t.is(await k.balance(a.id), GRANT - 5 * credits('0.15'));
});

test.serial('settlement follows the actual result seconds (duration fault), not the request', async (t) => {
  const a = await k.account();
  await k.fault('ark-video-a', { type: 'duration', seconds: 7 }, 1);
  const sub = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 10 }));
  t.is((await k.task(sub.id)).reserved_nano, 10 * credits('0.15'));
  const body = await k.final(a.key, sub.id);
  t.is(body.duration, 7);
  t.is(await k.balance(a.id), GRANT - 7 * credits('0.15'));
});

test('lite tier: priced per second at the requested resolution tier', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, textVideo('seedance-1-0-lite', { duration: 6, resolution: '1080p' }));
  t.is((await k.task(sub.id)).reserved_nano, 6 * credits('0.1'));
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'succeeded');
  t.is(body.resolution, '1080p');
  t.is(await k.balance(a.id), GRANT - 6 * credits('0.1'));
});

test('real-person pro at 4k with a public image: 4k tier price', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, { model: 'kling-real-person-pro', content: [text, { type: 'image_url', image_url: { url: 'https://img.example.com/me.jpg' } }], duration: 4, resolution: '4k' });
  t.is((await k.task(sub.id)).reserved_nano, 4 * credits('0.6'));
  await k.final(a.key, sub.id);
  t.is(await k.balance(a.id), GRANT - 4 * credits('0.6'));
});

test('real-person without resolution: priced and rendered at the upstream default 720p', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, textVideo('kling-real-person-std', { duration: 3 }));
  t.is((await k.task(sub.id)).reserved_nano, 3 * credits('0.08'));
  const body = await k.final(a.key, sub.id);
  t.is(body.resolution, '720p');
  t.is(await k.balance(a.id), GRANT - 3 * credits('0.08'));
});

test.serial('ratio, resolution and watermark pass through; portrait_auth is kept for audit and not sent upstream', async (t) => {
  const a = await k.account();
  const before = (await k.upstreamBodies('ark-video-a')).length;
  const sub = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 5, ratio: '9:16', resolution: '1080p', watermark: true, portrait_auth: true }));
  const body = await k.final(a.key, sub.id);
  const sent = (await k.upstreamBodies('ark-video-a')).slice(before);
  t.is(sent.length, 1);
  t.like(sent[0], { model: 'seedance-1-0-pro', ratio: '9:16', resolution: '1080p', watermark: true, duration: 5 });
  t.false('portrait_auth' in sent[0]);
  t.is((await k.task(sub.id)).input.portrait_auth, true);
  t.is(body.ratio, '9:16');
  t.is(body.resolution, '1080p');
});

test('video_mode extend with a reference video: duration omitted reserves the 10 s extend maximum', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, { model: 'seedance-1-0-pro-progress', content: [text, refVideo], resolution: '720p', video_mode: 'extend' });
  t.is((await k.task(sub.id)).reserved_nano, 10 * credits('0.2'));
  t.is((await k.final(a.key, sub.id)).status, 'succeeded');
});

test('success body: every field of spec 4.4, video_url and expires_at at the top level, no progress outside the progress tier', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 5, generate_audio: true, seed: 42 }));
  const body = await k.final(a.key, sub.id);
  for (const f of ['id', 'status', 'model', 'created_at', 'updated_at', 'ratio', 'resolution', 'duration', 'generate_audio', 'seed', 'framespersecond', 'content', 'usage', 'video_url', 'expires_at']) {
    t.true(f in body, f);
  }
  t.is(body.id, sub.id);
  t.is(body.seed, 42);
  t.is(body.generate_audio, true);
  t.is(body.framespersecond, 24);
  t.true(body.content.video_url.includes('.mp4'));
  t.true(body.content.last_frame_url.includes('last_frame'));
  t.is(body.video_url, body.content.video_url);
  t.true(body.expires_at > Date.now() / 1000 + 23 * 3600);
  t.true(body.usage.completion_tokens > 0);
  t.false('progress' in body);
  t.false('error' in body);
});

test('the progress tier reports progress', async (t) => {
  const a = await k.account();
  const sub = await k.submit(a.key, textVideo('seedance-1-0-pro-progress', { duration: 5 }));
  const body = await k.final(a.key, sub.id);
  t.is(body.progress, 100);
});

test.serial('running: progress shown for the progress tier only', async (t) => {
  const a = await k.account();
  await k.fault('ark-video-a', { type: 'hang' }, 2);
  const p = await k.submit(a.key, textVideo('seedance-1-0-pro-progress', { duration: 5 }));
  const n = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 5 }));
  const running = async (id: string) => {
    for (let i = 0; i < 200; i++) {
      const b = (await (await k.get(a.key, `/v1/videos/generations/${id}`)).json()) as Record<string, any>;
      if (b.status === 'running') return b;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('never running');
  };
  const pb = await running(p.id);
  for (let i = 0; i < 100 && !('progress' in pb); i++) Object.assign(pb, await running(p.id));
  t.true(Number.isInteger(pb.progress) && pb.progress >= 0 && pb.progress <= 100);
  const nb = await running(n.id);
  t.false('progress' in nb);
  t.false('video_url' in nb);
});

test.serial('upstream failure: failed with an error object, full refund', async (t) => {
  const a = await k.account();
  await k.fault('ark-video-a', { type: 'fail' }, 1);
  const sub = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 8 }));
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'failed');
  t.is(body.error.code, 'generation_failed');
  t.true(body.error.message.length > 0);
  t.false('video_url' in body);
  t.is(await k.balance(a.id), GRANT);
  t.is((await k.task(sub.id)).cost_nano, 0);
});

test.serial('upstream expiry: expired, full refund', async (t) => {
  const a = await k.account();
  await k.fault('ark-video-a', { type: 'expire' }, 1);
  const sub = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 8 }));
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'expired');
  t.is(body.error.code, 'task_expired');
  t.is(await k.balance(a.id), GRANT);
});

test.serial('zero output from the upstream: failed, full refund', async (t) => {
  const a = await k.account();
  await k.fault('ark-video-a', { type: 'fewer_outputs', count: 0 }, 1);
  const sub = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 8 }));
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'failed');
  t.is(body.error.code, 'no_output');
  t.is(await k.balance(a.id), GRANT);
});

test.serial('5xx on channel a: served by channel b', async (t) => {
  const a = await k.account();
  await k.fault('ark-video-a', { type: 'submit_status', status: 500 }, 1);
  const sub = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 5 }));
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'succeeded');
  const doc = await k.task(sub.id);
  t.is(doc.upstream?.channel, 'ark-video-b');
  t.is(doc.upstream?.attempts, 2);
  t.is(await k.balance(a.id), GRANT - 5 * credits('0.15'));
});

test.serial('connection reset on channel a: served by channel b', async (t) => {
  const a = await k.account();
  await k.fault('ark-video-a', { type: 'submit_reset' }, 1);
  const sub = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 5 }));
  t.is((await k.final(a.key, sub.id)).status, 'succeeded');
  t.is((await k.task(sub.id)).upstream?.channel, 'ark-video-b');
});

test.serial('5xx on all three channels: failed, full refund', async (t) => {
  const a = await k.account();
  for (const ch of ['ark-video-a', 'ark-video-b', 'ark-video-c']) await k.fault(ch, { type: 'submit_status', status: 503 }, 1);
  const sub = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 5 }));
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'failed');
  t.is(await k.balance(a.id), GRANT);
  // Its usage row counts the three channels tried.
  await k.gw.flushRows();
  const row = (await (await k.get(a.key, '/api/v1/usage')).json()) as { data: Array<{ task_id: string; attempts_count: number }> };
  t.is(row.data.find((r) => r.task_id === sub.id)?.attempts_count, 3);
});

test.serial('upstream 4xx at submission: failed with the upstream message, not charged, no other channel tried', async (t) => {
  const a = await k.account();
  await k.fault('ark-video-a', { type: 'submit_status', status: 400, body: { error: { code: 'InvalidParameter', message: 'ratio 7:3 is not supported', param: 'ratio', type: 'BadRequest' } } }, 1);
  const before = (await k.upstreamBodies('ark-video-b')).length;
  const sub = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 5, ratio: '7:3' }));
  const body = await k.final(a.key, sub.id);
  t.is(body.status, 'failed');
  t.is(body.error.message, 'InvalidParameter: ratio 7:3 is not supported');
  t.is((await k.upstreamBodies('ark-video-b')).length, before);
  t.is(await k.balance(a.id), GRANT);
});

test.serial('poll failures are retried: the task still succeeds and is charged once', async (t) => {
  const a = await k.account();
  await k.fault('ark-video-a', { type: 'poll_fail', count: 2 }, 1);
  const sub = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 5 }));
  t.is((await k.final(a.key, sub.id)).status, 'succeeded');
  t.is(await k.balance(a.id), GRANT - 5 * credits('0.15'));
});

// ---- poll and list ----
test('another account cannot see the task: 404', async (t) => {
  const a = await k.account();
  const b = await k.account();
  const sub = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 5 }));
  const r = await k.get(b.key, `/v1/videos/generations/${sub.id}`);
  t.is(r.status, 404);
  t.is((await k.get(a.key, '/v1/videos/generations/task_nope')).status, 404);
});

test.serial('list: newest first, all statuses by default, status comma filter, limit and cursor', async (t) => {
  const a = await k.account();
  const ok1 = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 2 }));
  await k.final(a.key, ok1.id);
  await k.fault('ark-video-a', { type: 'fail' }, 1);
  const bad = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 2 }));
  await k.final(a.key, bad.id);
  await k.fault('ark-video-a', { type: 'expire' }, 1);
  const exp = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 2 }));
  await k.final(a.key, exp.id);
  const ok2 = await k.submit(a.key, textVideo('seedance-1-0-pro', { duration: 2 }));
  await k.final(a.key, ok2.id);
  const list = async (q: string) => {
    const r = await k.get(a.key, `/v1/videos/generations${q}`);
    t.is(r.status, 200);
    return (await r.json()) as { object: string; data: Array<Record<string, any>>; next_cursor: string | null };
  };
  const all = await list('');
  t.deepEqual(all.data.map((x) => x.id), [ok2.id, exp.id, bad.id, ok1.id]);
  t.is(all.next_cursor, null);
  t.deepEqual((await list('?status=all')).data.length, 4);
  t.deepEqual((await list('?status=succeeded')).data.map((x) => x.id), [ok2.id, ok1.id]);
  t.deepEqual((await list('?status=failed,expired')).data.map((x) => x.id), [exp.id, bad.id]);
  t.deepEqual((await list('?status=queued,running,cancelled')).data, []);
  const first = await list('?limit=1');
  t.deepEqual(first.data.map((x) => x.id), [ok2.id]);
  t.truthy(first.next_cursor);
  const second = await list(`?limit=2&cursor=${first.next_cursor}`);
  t.deepEqual(second.data.map((x) => x.id), [exp.id, bad.id]);
  // list items are the poll bodies
  t.is(all.data[0].video_url, (await k.final(a.key, ok2.id)).video_url);
  t.is(all.data[1].error.code, 'task_expired');
});

test('list: limit above 100 or an unknown status is 400', async (t) => {
  const a = await k.account();
  t.is((await k.get(a.key, '/v1/videos/generations?limit=101')).status, 400);
  t.is((await k.get(a.key, '/v1/videos/generations?limit=0')).status, 400);
  t.is((await k.get(a.key, '/v1/videos/generations?status=done')).status, 400);
  const r = await k.get(a.key, '/v1/videos/generations?limit=100&status=in_flight');
  t.is(r.status, 400);
});

test('list shows only this account\'s video tasks', async (t) => {
  const a = await k.account();
  const b = await k.account();
  await k.submit(b.key, textVideo('seedance-1-0-pro', { duration: 2 }));
  const r = (await (await k.get(a.key, '/v1/videos/generations')).json()) as { data: unknown[] };
  t.deepEqual(r.data, []);
});

test('idempotency: the same key and body replay the submit answer, one task', async (t) => {
  const a = await k.account();
  const body = textVideo('seedance-1-0-pro', { duration: 3 });
  const r1 = await k.post(a.key, body, { 'Idempotency-Key': 'vid-1' });
  const t1 = await r1.text();
  const r2 = await k.post(a.key, body, { 'Idempotency-Key': 'vid-1' });
  t.is(r2.headers.get('idempotency-replayed'), 'true');
  t.is(await r2.text(), t1);
  t.is(await k.gw.deps.db.Task.countDocuments({ account_id: a.id }), 1);
});
