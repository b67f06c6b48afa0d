import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';

const GRANT = parseCredits('40.44');
const PER_REQUEST = parseCredits('0.1');

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

async function submit(key: string, body: unknown): Promise<Record<string, any>> {
  const r = await post(key, '/v1/music/generations', body);
  const text = await r.text();
  if (r.status !== 200) throw new Error(`submit answered ${r.status}: ${text}`);
  return JSON.parse(text);
}

async function final(key: string, id: string): Promise<Record<string, any>> {
  for (let i = 0; i < 300; i++) {
    const body = (await (await get(key, `/v1/music/generations/${id}`)).json()) as Record<string, any>;
    if (body.status !== 'processing') return body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`generation ${id} did not finish`);
}

const SONG = { model: 'suno-v4-5', prompt: '[Verse]\nNeon rain on the harbour', title: 'Harbour Lights', tags: 'synthwave, female vocals' };

test('generation: processing, then two songs, charged per request', async (t) => {
  const a = await account();
  const sub = await submit(a.key, SONG);
  t.deepEqual(Object.keys(sub).sort(), ['created_at', 'id', 'model', 'object', 'status']);
  t.is(sub.status, 'processing');
  t.is(sub.model, 'suno-v4-5');
  t.is(await gw.deps.wallet.balance(a.id), GRANT - PER_REQUEST);
  const done = await final(a.key, sub.id);
  t.is(done.status, 'succeeded');
  t.is(done.songs.length, 2);
  for (const s of done.songs) {
    t.true(s.audio_url.startsWith('http'));
    t.true(s.image_url.startsWith('http'));
    t.true(s.duration > 0);
    t.is(s.title, 'Harbour Lights');
    t.is(s.tags, 'synthwave, female vocals');
    t.is(s.lyrics, SONG.prompt);
  }
  t.is(done.usage.songs, 2);
  t.is(done.cost, '0.10');
  t.is(done.error, null);
  t.is(done.progress, undefined);
  t.true(done.expires_at > Date.now() / 1000);
  t.is(await gw.deps.wallet.balance(a.id), GRANT - PER_REQUEST);
  // Suno's wire format upstream
  const sent = ((await gw.control('GET', '/media/tasks?channel=suno-a')).tasks as Array<{ body: Record<string, any>; path: string }>).find((x) => x.body.title === 'Harbour Lights')!;
  t.is(sent.path, '/suno/submit/music');
  t.is(sent.body.mv, 'chirp-auk');
  t.is(sent.body.prompt, SONG.prompt);
  t.is(sent.body.tags, SONG.tags);
  t.is(sent.body.make_instrumental, false);
});

test('description mode and the older alias', async (t) => {
  const a = await account();
  const sub = await submit(a.key, { model: 'suno-v4', gpt_description_prompt: 'a calm piano piece about autumn', make_instrumental: true });
  t.is(sub.model, 'suno-v4-5');
  const done = await final(a.key, sub.id);
  t.is(done.status, 'succeeded');
  t.true(done.make_instrumental);
});

test('validation: 400 naming the field; model errors; nothing charged', async (t) => {
  const a = await account();
  const cases: Array<[unknown, number, string, string?]> = [
    [{ prompt: 'x' }, 400, 'invalid_request', 'model'],
    [{ model: 'suno-v4-5' }, 400, 'invalid_request', 'prompt'],
    [{ model: 'suno-v4-5', prompt: '   ' }, 400, 'invalid_request', 'prompt'],
    [{ model: 'suno-v4-5', make_instrumental: true }, 400, 'invalid_request', 'prompt'],
    [{ model: 'suno-v4-5', prompt: 'x'.repeat(5001) }, 400, 'invalid_request', 'prompt'],
    [{ model: 'suno-v4-5', gpt_description_prompt: 'x'.repeat(501) }, 400, 'invalid_request', 'gpt_description_prompt'],
    [{ ...SONG, title: 't'.repeat(81) }, 400, 'invalid_request', 'title'],
    [{ ...SONG, make_instrumental: 'yes' }, 400, 'invalid_request', 'make_instrumental'],
    [{ ...SONG, model: 'suno-v9' }, 400, 'model_not_found'],
    [{ ...SONG, model: 'gpt-image-1' }, 503, 'no_channel_available'],
  ];
  for (const [body, status, code, param] of cases) {
    const r = await post(a.key, '/v1/music/generations', body);
    t.is(r.status, status, JSON.stringify(body).slice(0, 80));
    const e = ((await r.json()) as any).error;
    t.is(e.code, code);
    if (param) t.is(e.param, param);
  }
  // instrumental with a style is enough
  t.is((await post(a.key, '/v1/music/generations', { model: 'suno-v4-5', make_instrumental: true, tags: 'lofi' })).status, 200);
  t.is(await gw.deps.wallet.balance(a.id), GRANT - PER_REQUEST);
});

test.serial('fewer songs than 2: charged pro rata, the rest refunded', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'suno-a', fault: { type: 'fewer_outputs', count: 1 }, times: 1 });
  const sub = await submit(a.key, SONG);
  const done = await final(a.key, sub.id);
  t.is(done.status, 'succeeded');
  t.is(done.songs.length, 1);
  t.is(done.usage.songs, 1);
  t.is(done.cost, '0.05');
  t.is(await gw.deps.wallet.balance(a.id), GRANT - parseCredits('0.05'));
  const usage = await gw.deps.db.Usage.findById(sub.id).lean();
  t.is(usage?.unit_count, 1);
  t.is(usage?.unit_type, 'song');
  t.is(usage?.cost_nano, parseCredits('0.05'));
});

test.serial('failure and expiry: full refund, error shown', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'suno-a', fault: { type: 'fail' }, times: 1 });
  const failed = await final(a.key, (await submit(a.key, SONG)).id);
  t.is(failed.status, 'failed');
  t.is(failed.error.code, 'generation_failed');
  t.deepEqual(failed.songs, []);
  t.is(failed.cost, '0.00');
  await gw.control('POST', '/media/faults', { channel: 'suno-a', fault: { type: 'expire' }, times: 1 });
  const expired = await final(a.key, (await submit(a.key, SONG)).id);
  t.is(expired.status, 'expired');
  t.is(expired.error.code, 'task_expired');
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
});

test.serial('upstream 400 at submission: failed, not charged; 5xx moves to the next channel', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'suno-a', fault: { type: 'submit_status', status: 400, body: { code: 'error', message: 'lyrics rejected' } }, times: 1 });
  const refused = await final(a.key, (await submit(a.key, SONG)).id);
  t.is(refused.status, 'failed');
  t.is(refused.error.message, 'lyrics rejected');
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
  await gw.control('POST', '/media/faults', { channel: 'suno-a', fault: { type: 'submit_status', status: 502 }, times: 1 });
  const moved = await final(a.key, (await submit(a.key, SONG)).id);
  t.is(moved.status, 'succeeded');
  t.is((await gw.deps.db.Task.findById(moved.id).lean())?.upstream?.channel, 'suno-b');
});

test('list: status filter from processing,succeeded,failed,expired,cancelled,all; newest first', async (t) => {
  const a = await account();
  const first = await submit(a.key, SONG);
  await final(a.key, first.id);
  const second = await submit(a.key, { ...SONG, title: 'second' });
  await final(a.key, second.id);
  const all = (await (await get(a.key, '/v1/music/generations')).json()) as { data: Array<Record<string, any>>; next_cursor: string | null };
  t.deepEqual(all.data.map((x) => x.id), [second.id, first.id]);
  t.is(all.next_cursor, null);
  const ok = (await (await get(a.key, '/v1/music/generations?status=succeeded')).json()) as { data: unknown[] };
  t.is(ok.data.length, 2);
  const none = (await (await get(a.key, '/v1/music/generations?status=processing,failed,expired,cancelled')).json()) as { data: unknown[] };
  t.is(none.data.length, 0);
  const page = (await (await get(a.key, '/v1/music/generations?status=all&limit=1')).json()) as { data: Array<{ id: string }>; next_cursor: string };
  t.deepEqual(page.data.map((x) => x.id), [second.id]);
  const next = (await (await get(a.key, `/v1/music/generations?limit=1&cursor=${page.next_cursor}`)).json()) as { data: Array<{ id: string }> };
  t.deepEqual(next.data.map((x) => x.id), [first.id]);
  const bad = await get(a.key, '/v1/music/generations?status=queued');
  t.is(bad.status, 400);
  // another account sees none of them
  const b = await account();
  t.is((await get(b.key, `/v1/music/generations/${first.id}`)).status, 404);
});

test('assets: fresh links and lyrics of a finished generation, free', async (t) => {
  const a = await account();
  const done = await final(a.key, (await submit(a.key, SONG)).id);
  const before = await gw.deps.wallet.balance(a.id);
  const r = await post(a.key, '/v1/music/assets', { generation_id: done.id });
  t.is(r.status, 200);
  const assets = (await r.json()) as { generation_id: string; songs: Array<Record<string, any>> };
  t.is(assets.generation_id, done.id);
  t.deepEqual(assets.songs.map((s) => s.id), done.songs.map((s: any) => s.id));
  for (const s of assets.songs) {
    t.true(s.audio_url.startsWith('http'));
    t.is(s.lyrics, SONG.prompt);
    t.true(s.expires_at > Date.now() / 1000);
  }
  const one = (await (await post(a.key, '/v1/music/assets', { generation_id: done.id, song_ids: [done.songs[1].id] })).json()) as { songs: Array<{ id: string }> };
  t.deepEqual(one.songs.map((s) => s.id), [done.songs[1].id]);
  t.is(await gw.deps.wallet.balance(a.id), before);
  // rules
  const unknownSong = await post(a.key, '/v1/music/assets', { generation_id: done.id, song_ids: ['nope'] });
  t.is(unknownSong.status, 400);
  t.is(((await unknownSong.json()) as any).error.param, 'song_ids');
  t.is((await post(a.key, '/v1/music/assets', {})).status, 400);
  const b = await account();
  t.is((await post(b.key, '/v1/music/assets', { generation_id: done.id })).status, 404);
});

test.serial('assets of a generation without songs: 400', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'suno-a', fault: { type: 'fail' }, times: 1 });
  const failed = await final(a.key, (await submit(a.key, SONG)).id);
  const r = await post(a.key, '/v1/music/assets', { generation_id: failed.id });
  t.is(r.status, 400);
  t.is(((await r.json()) as any).error.param, 'generation_id');
});

test('idempotency: replay returns the same generation, one charge', async (t) => {
  const a = await account();
  const r1 = await post(a.key, '/v1/music/generations', SONG, { 'Idempotency-Key': 'song-1' });
  const r2 = await post(a.key, '/v1/music/generations', SONG, { 'Idempotency-Key': 'song-1' });
  t.is(r2.headers.get('idempotency-replayed'), 'true');
  t.is(await r2.text(), await r1.text());
  t.is(await gw.deps.wallet.balance(a.id), GRANT - PER_REQUEST);
});

test('while processing: songs empty and progress as Suno reports it', async (t) => {
  // A second world whose simulator takes time: music is due after 4 x 800 ms.
  const slow = await startGateway({}, { simulator: true, worker: true, mediaDelayMs: 800 });
  try {
    const a = await slow.newAccount();
    const key = (await slow.newKey(a.id)).key;
    const r = await fetch(`${slow.url}/v1/music/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(SONG) });
    const id = ((await r.json()) as any).id;
    const seen: Array<Record<string, any>> = [];
    for (let i = 0; i < 200; i++) {
      const body = (await (await fetch(`${slow.url}/v1/music/generations/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as Record<string, any>;
      seen.push(body);
      if (body.status !== 'processing') break;
      await new Promise((res) => setTimeout(res, 100));
    }
    const processing = seen.filter((b) => b.status === 'processing');
    t.true(processing.length > 0);
    t.true(processing.every((b) => Array.isArray(b.songs) && b.songs.length === 0 && b.error === null));
    const withProgress = processing.filter((b) => b.progress !== undefined);
    t.true(withProgress.length > 0);
    t.true(withProgress.every((b) => Number.isInteger(b.progress) && b.progress >= 0 && b.progress <= 100));
    const last = seen[seen.length - 1];
    t.is(last.status, 'succeeded');
    t.is(last.progress, undefined);
  } finally {
    await slow.close();
  }
});
