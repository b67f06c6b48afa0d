import test from 'ava';
import { createHash } from 'node:crypto';
import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';
import { idempotencyModel } from '../../gateway/middleware/idempotency-store';
import { CONTENT_DIGEST_MAX_BYTES } from '../../gateway/middleware/idempotency';

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { simulator: true, worker: true });
});
test.after.always(async () => gw?.close());

const submit = (key: string, body: unknown, idem?: string) =>
  fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(idem === undefined ? {} : { 'Idempotency-Key': idem }) },
    body: JSON.stringify(body),
  });

test('100 parallel identical submissions: one task, one reservation; the rest replay or see in-flight', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const body = { model: 'gpt-image-1', prompt: 'one and only', async: true };
  const res = await Promise.all(Array.from({ length: 100 }, () => submit(key, body, 'same-intent')));
  const texts = await Promise.all(res.map((r) => r.text()));
  const ok = res.map((r, i) => ({ r, text: texts[i] })).filter((x) => x.r.status === 200);
  const inflight = res.filter((r) => r.status === 409);
  t.is(ok.length + inflight.length, 100);
  t.true(ok.length >= 1);
  const ids = new Set(ok.map((x) => JSON.parse(x.text).id));
  t.is(ids.size, 1);
  for (const r of inflight) t.is(JSON.parse(texts[res.indexOf(r)]).error.code, 'idempotency_in_flight');
  const tasks = await gw.deps.db.Task.find({ account_id: a.id }).lean();
  t.is(tasks.length, 1);
  await gw.deps.wallet.journal.flush(); // holds are written ahead, drained in batches
  const holds = await gw.deps.db.Ledger.find({ account_id: a.id, kind: 'reserve' }).lean();
  t.is(holds.length, 1);
  // afterwards every retry replays the same answer
  const again = await submit(key, body, 'same-intent');
  t.is(again.headers.get('idempotency-replayed'), 'true');
  t.is(JSON.parse(await again.text()).id, [...ids][0]);
});

test('scope is the account: another key of the same account replays; another account does not', async (t) => {
  const a = await gw.newAccount();
  const k1 = (await gw.newKey(a.id)).key;
  const k2 = (await gw.newKey(a.id)).key;
  const body = { model: 'gpt-image-1', prompt: 'scoped', async: true };
  const first = await (await submit(k1, body, 'scope-key')).text();
  const r2 = await submit(k2, body, 'scope-key');
  t.is(r2.headers.get('idempotency-replayed'), 'true');
  t.is(await r2.text(), first);
  const b = await gw.newAccount();
  const kb = (await gw.newKey(b.id)).key;
  const r3 = await submit(kb, body, 'scope-key');
  t.is(r3.headers.get('idempotency-replayed'), null);
  t.not(JSON.parse(await r3.text()).id, JSON.parse(first).id);
});

test('no header, no dedupe; a different body with the same key is 409 idempotency_key_reuse', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const body = { model: 'gpt-image-1', prompt: 'twice', async: true };
  const x = (await (await submit(key, body)).json()) as { id: string };
  const y = (await (await submit(key, body)).json()) as { id: string };
  t.not(x.id, y.id);
  await submit(key, body, 'k-reuse');
  const r = await submit(key, { ...body, prompt: 'changed' }, 'k-reuse');
  t.is(r.status, 409);
  const e = ((await r.json()) as { error: { code: string; type: string } }).error;
  t.is(e.code, 'idempotency_key_reuse');
  t.is(e.type, 'invalid_request_error');
});

test('the same key and body sent to another endpoint is another request: 409 idempotency_key_reuse, not the first endpoint\'s answer', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const post = (path: string, body: unknown) =>
    fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'Idempotency-Key': 'k-endpoint' }, body: JSON.stringify(body) });
  const body = { model: 'suno-v4-5', gpt_description_prompt: 'one song' };
  const music = await post('/v1/music/generations', body);
  const musicText = await music.text();
  t.is(music.status, 200, musicText);
  for (const path of ['/v1/images/generations', '/v1/videos/generations']) {
    const r = await post(path, body);
    const text = await r.text();
    t.is(r.status, 409, `${path}: ${text}`);
    t.is(r.headers.get('idempotency-replayed'), null);
    t.is((JSON.parse(text) as { error: { code: string } }).error.code, 'idempotency_key_reuse');
  }
  // the endpoint it was claimed on still replays
  const again = await post('/v1/music/generations', body);
  t.is(again.headers.get('idempotency-replayed'), 'true');
  t.is(await again.text(), musicText);
  // a claim stored before the endpoint was recorded compares bodies only, as it did
  const Idempotency = idempotencyModel(gw.deps.db.conn);
  const written = await Idempotency.updateOne({ _id: `${a.id}:${createHash('sha256').update('k-endpoint').digest('hex')}` }, { $unset: { endpoint: 1 } });
  t.is(written.matchedCount, 1);
  const legacy = await post('/v1/music/generations', body);
  t.is(legacy.headers.get('idempotency-replayed'), 'true');
});

test('the same body is the same content: spacing and member order do not matter; a claim stored as raw bytes still replays', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const send = (text: string, idem: string) =>
    fetch(`${gw.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'Idempotency-Key': idem }, body: text });
  const first = await send('{"model": "gpt-image-1", "prompt": "same content", "async": true}', 'k-content');
  const firstText = await first.text();
  t.is(first.status, 200, firstText);
  for (const again of ['{"model":"gpt-image-1","prompt":"same content","async":true}', '{"async":true,"prompt":"same content","model":"gpt-image-1"}']) {
    const r = await send(again, 'k-content');
    t.is(r.status, 200, again);
    t.is(r.headers.get('idempotency-replayed'), 'true');
    t.is(await r.text(), firstText);
  }
  const changed = await send('{"async":true,"prompt":"other content","model":"gpt-image-1"}', 'k-content');
  t.is(changed.status, 409);

  // A claim written before the content digest (its body_hash the raw bytes' sha256) still reads as the same body.
  const raw = '{"model": "gpt-image-1", "prompt": "stored raw", "async": true}';
  const stored = await send(raw, 'k-raw');
  t.is(stored.status, 200);
  const sha = (x: string) => createHash('sha256').update(x).digest('hex');
  const Idempotency = idempotencyModel(gw.deps.db.conn);
  const written = await Idempotency.updateOne({ _id: `${a.id}:${sha('k-raw')}` }, { $set: { body_hash: sha(raw) } });
  t.is(written.matchedCount, 1);
  const replay = await send(raw, 'k-raw');
  t.is(replay.headers.get('idempotency-replayed'), 'true');
  t.is(await replay.text(), await stored.text());
});

test('a JSON body over CONTENT_DIGEST_MAX_BYTES (an image inline) is compared by its bytes: the same bytes replay, other spacing is another body', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const image = `data:image/png;base64,${Buffer.alloc(CONTENT_DIGEST_MAX_BYTES, 7).toString('base64')}`;
  const send = (text: string) =>
    fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'Idempotency-Key': 'k-big' }, body: text });
  const compact = JSON.stringify({ model: 'gpt-image-1', prompt: 'big inline', image, async: true });
  t.true(Buffer.byteLength(compact) > CONTENT_DIGEST_MAX_BYTES);
  const first = await send(compact);
  const firstText = await first.text();
  t.is(first.status, 200, firstText.slice(0, 300));
  const again = await send(compact);
  t.is(again.headers.get('idempotency-replayed'), 'true');
  t.is(await again.text(), firstText);
  const spaced = await send(JSON.stringify({ model: 'gpt-image-1', prompt: 'big inline', image, async: true }, null, 1));
  t.is(spaced.status, 409);
  t.is(((await spaced.json()) as { error: { code: string } }).error.code, 'idempotency_key_reuse');
});

test('invalid keys: empty, over 200 characters, non-printable -> 400 invalid_idempotency_key', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const body = { model: 'gpt-image-1', prompt: 'x', async: true };
  for (const bad of ['', 'x'.repeat(201), 'tab\there']) {
    const r = await submit(key, body, bad);
    t.is(r.status, 400, JSON.stringify(bad));
    t.is(((await r.json()) as any).error.code, 'invalid_idempotency_key');
  }
  t.is((await submit(key, body, 'x'.repeat(200))).status, 200);
});

test.serial('a failed first attempt leaves nothing committed: its retry with the same key runs cleanly', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  await gw.control('POST', '/media/faults', { channel: 'openai-images-a', fault: { type: 'submit_status', status: 400, body: { error: { code: 'bad', message: 'no', param: null, type: 'invalid_request_error' } } }, times: 1 });
  const body = { model: 'gpt-image-1', prompt: 'retry me' };
  const r1 = await submit(key, body, 'retry-key');
  t.is(r1.status, 400);
  const r2 = await submit(key, body, 'retry-key');
  t.is(r2.status, 200);
  t.is(r2.headers.get('idempotency-replayed'), null);
  t.is(((await r2.json()) as { data: unknown[] }).data.length, 1);
  t.is(await gw.deps.wallet.balance(a.id), parseCredits('40.44') - parseCredits('0.04'));
});

test('a held key whose holder vanished is free after its 10-minute hold', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const { sha256Hex } = await import('../../platform/secrets');
  const id = `${a.id}:${sha256Hex('vanished')}`;
  const body = { model: 'gpt-image-1', prompt: 'x', async: true };
  await idempotencyModel(gw.deps.db.conn).create({ _id: id, account_id: a.id, body_hash: 'whatever', state: 'in_flight', holder: 'dead', until: new Date(Date.now() + 60_000), status: null, headers: null, body: null, not_cached: false, created_at: new Date() });
  t.is((await submit(key, body, 'vanished')).status, 409);
  await idempotencyModel(gw.deps.db.conn).updateOne({ _id: id }, { $set: { until: new Date(Date.now() - 1) } });
  t.is((await submit(key, body, 'vanished')).status, 200);
});

test('50 concurrent submissions against a balance that covers 20: exactly 20 accepted', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  // Balance 8.00; each task reserves 0.04 x 10 images = 0.40 -> exactly 20 fit.
  await gw.deps.wallet.apply({ opId: `${a.id}:adjust`, accountId: a.id, kind: 'adjust', amountNano: -parseCredits('32.44') });
  const res = await Promise.all(Array.from({ length: 50 }, () => submit(key, { model: 'gpt-image-1', prompt: 'x', n: 10, async: true })));
  const statuses = res.map((r) => r.status);
  // Every status counted, so a failure says what the other answers were.
  const byStatus: Record<number, number> = {};
  for (const s of statuses) byStatus[s] = (byStatus[s] ?? 0) + 1;
  t.deepEqual(byStatus, { 200: 20, 402: 30 });
  const bodies = await Promise.all(res.filter((r) => r.status === 402).map((r) => r.json() as Promise<{ error: { code: string } }>));
  t.true(bodies.every((b) => b.error.code === 'quota_exceeded'));
  t.is((await gw.deps.db.Task.find({ account_id: a.id }).lean()).length, 20);
  await gw.flushRows();
  const all = await gw.deps.db.Usage.find({ account_id: a.id }).lean();
  const rejected = all.filter((r) => r.status === 'rejected');
  t.is(rejected.length, 30, 'one rejected usage row per refusal');
  t.true(rejected.every((r) => r.cost_nano === 0));
});

test('20 concurrent retries on a lapsed key: exactly one takes it over, one task', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const { sha256Hex } = await import('../../platform/secrets');
  await idempotencyModel(gw.deps.db.conn).create({
    _id: `${a.id}:${sha256Hex('lapsed')}`, account_id: a.id, body_hash: 'old', state: 'in_flight', holder: 'dead',
    until: new Date(Date.now() - 1), status: null, headers: null, body: null, not_cached: false, created_at: new Date(),
  });
  const body = { model: 'gpt-image-1', prompt: 'takeover', async: true };
  const res = await Promise.all(Array.from({ length: 20 }, () => submit(key, body, 'lapsed')));
  const ok = res.filter((r) => r.status === 200);
  t.true(ok.length >= 1);
  t.true(res.every((r) => r.status === 200 || r.status === 409));
  const ids = new Set(await Promise.all(ok.map(async (r) => ((await r.json()) as { id: string }).id)));
  t.is(ids.size, 1);
  t.is((await gw.deps.db.Task.find({ account_id: a.id }).lean()).length, 1);
});
