import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';

const GRANT = parseCredits('40.44');
const CREATION = parseCredits('2');

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { simulator: true, worker: true, mediaDelayMs: 0 });
});
test.after.always(async () => gw?.close());

const send = (method: string, key: string | null, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const create = (key: string, body: unknown, headers: Record<string, string> = {}) => send('POST', key, '/v1/videos/avatars', body, headers);

async function account(fields: Record<string, unknown> = {}) {
  const a = await gw.newAccount();
  return { id: a.id, key: (await gw.newKey(a.id, fields)).key };
}

async function settled(key: string, id: string): Promise<Record<string, any>> {
  for (let i = 0; i < 300; i++) {
    const body = (await (await send('GET', key, `/v1/videos/avatars/${id}`)).json()) as Record<string, any>;
    if (body.status !== 'pending') return body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`avatar ${id} stayed pending`);
}

const AVATAR = { name: 'Anna studio', source_url: 'https://cdn.example.com/anna.jpg' };

test('create: pending record with the 2.3 fields, reserved per creation, then ready and charged once', async (t) => {
  const a = await account();
  const r = await create(a.key, AVATAR);
  t.is(r.status, 200);
  t.truthy(r.headers.get('x-gateway-trace'));
  const rec = (await r.json()) as Record<string, any>;
  t.is(rec.status, 'pending');
  t.is(rec.name, 'Anna studio');
  t.is(rec.source_kind, 'image');
  t.is(rec.error, null);
  t.regex(rec.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  t.is(await gw.deps.wallet.balance(a.id), GRANT - CREATION);
  const done = await settled(a.key, rec.id);
  t.is(done.status, 'ready');
  t.is(done.error, null);
  t.truthy(done.cover_url);
  t.is(await gw.deps.wallet.balance(a.id), GRANT - CREATION);
  const usage = await gw.deps.db.Usage.findById(rec.id).lean();
  t.is(usage?.status, 'success');
  t.is(usage?.cost_nano, CREATION);
  t.is(usage?.unit_type, 'creation');
  // what the upstream received
  const sent = (await gw.control('GET', '/media/tasks?channel=dh-a')).tasks as Array<{ body: Record<string, any> }>;
  t.true(sent.some((x) => x.body.kind === 'avatar_create' && x.body.name === 'Anna studio' && x.body.source_kind === 'image'));
});

test('source_kind video is kept', async (t) => {
  const a = await account();
  const rec = (await (await create(a.key, { ...AVATAR, source_kind: 'video', source_url: 'https://cdn.example.com/a.mp4' })).json()) as Record<string, any>;
  t.is(rec.source_kind, 'video');
  t.is((await settled(a.key, rec.id)).source_kind, 'video');
});

test('validation: name 1 to 20 characters, public http(s) source_url, source_kind image|video; nothing charged', async (t) => {
  const a = await account();
  const cases: Array<[unknown, string]> = [
    [{ source_url: AVATAR.source_url }, 'name'],
    [{ ...AVATAR, name: '' }, 'name'],
    [{ ...AVATAR, name: 'x'.repeat(21) }, 'name'],
    [{ name: 'n' }, 'source_url'],
    [{ ...AVATAR, source_url: 'ftp://cdn.example.com/a.jpg' }, 'source_url'],
    [{ ...AVATAR, source_url: 'data:image/png;base64,AAAA' }, 'source_url'],
    [{ ...AVATAR, source_url: 'http://127.0.0.1/a.jpg' }, 'source_url'],
    [{ ...AVATAR, source_kind: 'gif' }, 'source_kind'],
  ];
  for (const [body, param] of cases) {
    const r = await create(a.key, body);
    t.is(r.status, 400, JSON.stringify(body));
    const e = ((await r.json()) as any).error;
    t.is(e.code, 'invalid_request_error');
    t.is(e.type, 'invalid_request_error');
    t.is(e.param, param);
  }
  // 20 characters (CJK counted as characters) is fine
  const ok = await create(a.key, { ...AVATAR, name: '数字人'.repeat(6) + 'ab' });
  t.is(ok.status, 200);
  t.is(await gw.deps.wallet.balance(a.id), GRANT - CREATION);
});

test('digital-human dialect: 401 authentication_error, 403 model_not_allowed', async (t) => {
  const none = await send('POST', null, '/v1/videos/avatars', AVATAR);
  t.is(none.status, 401);
  t.is(((await none.json()) as any).error.code, 'authentication_error');
  const badGet = await send('GET', 'sk-nope', '/v1/videos/avatars');
  t.is(badGet.status, 401);
  t.is(((await badGet.json()) as any).error.code, 'authentication_error');
  const a = await account({ allowed_models: ['gpt-image-1'] });
  const r = await create(a.key, AVATAR);
  t.is(r.status, 403);
  const e = ((await r.json()) as any).error;
  t.is(e.code, 'model_not_allowed');
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
});

test('presets are free: {avatars: [{id, name}]}', async (t) => {
  const a = await account();
  const r = await send('GET', a.key, '/v1/videos/avatars/presets');
  t.is(r.status, 200);
  const body = (await r.json()) as { avatars: Array<{ id: string; name: string }> };
  t.true(body.avatars.length > 0);
  t.deepEqual(Object.keys(body.avatars[0]).sort(), ['id', 'name']);
  t.truthy(body.avatars.find((x) => x.id === 'preset_anna'));
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
});

test('list: own avatars only, newest first; get of another account is 404', async (t) => {
  const a = await account();
  const b = await account();
  const ids: string[] = [];
  for (const name of ['first', 'second', 'third']) {
    ids.push(((await (await create(a.key, { ...AVATAR, name })).json()) as any).id);
    await new Promise((r) => setTimeout(r, 5));
  }
  await create(b.key, { ...AVATAR, name: 'other' });
  const list = (await (await send('GET', a.key, '/v1/videos/avatars')).json()) as { avatars: Array<{ id: string; name: string }> };
  t.deepEqual(list.avatars.map((x) => x.name), ['third', 'second', 'first']);
  t.deepEqual(list.avatars.map((x) => x.id), [...ids].reverse());
  const other = await send('GET', b.key, `/v1/videos/avatars/${ids[0]}`);
  t.is(other.status, 404);
});

test('idempotency: the same key and body replays the first record, charged once', async (t) => {
  const a = await account();
  const r1 = await create(a.key, AVATAR, { 'Idempotency-Key': 'avatar-1' });
  const t1 = await r1.text();
  const r2 = await create(a.key, AVATAR, { 'Idempotency-Key': 'avatar-1' });
  t.is(r2.status, 200);
  t.is(r2.headers.get('idempotency-replayed'), 'true');
  t.is(await r2.text(), t1);
  t.is(await gw.deps.wallet.balance(a.id), GRANT - CREATION);
  const reuse = await create(a.key, { ...AVATAR, name: 'changed' }, { 'Idempotency-Key': 'avatar-1' });
  t.is(reuse.status, 409);
});

test('delete: ready -> deleted, gone from get, list and use; a second delete is 404', async (t) => {
  const a = await account();
  const rec = (await (await create(a.key, AVATAR)).json()) as any;
  t.is((await settled(a.key, rec.id)).status, 'ready');
  // usable for a dh-avatar video while it exists
  const video = { model: 'dh-avatar', avatar: rec.id, audio_url: 'https://cdn.example.com/s.mp3?dur=3', duration: 3 };
  const ok = await send('POST', a.key, '/v1/videos/generations', video);
  t.is(ok.status, 200, await ok.clone().text());
  const del = await send('DELETE', a.key, `/v1/videos/avatars/${rec.id}`);
  t.is(del.status, 200);
  t.deepEqual(await del.json(), { id: rec.id, object: 'avatar', deleted: true });
  t.is((await send('GET', a.key, `/v1/videos/avatars/${rec.id}`)).status, 404);
  const list = (await (await send('GET', a.key, '/v1/videos/avatars')).json()) as { avatars: Array<{ id: string }> };
  t.false(list.avatars.some((x) => x.id === rec.id));
  const use = await send('POST', a.key, '/v1/videos/generations', video);
  t.is(use.status, 400);
  t.is(((await use.json()) as any).error.code, 'invalid_request_error');
  t.is((await send('DELETE', a.key, `/v1/videos/avatars/${rec.id}`)).status, 404);
  // the task document keeps its history, marked deleted
  const doc = (await gw.deps.db.Task.findById(rec.id).lean()) as Record<string, any>;
  t.true(doc.deleted_at instanceof Date);
  t.is(doc.state, 'succeeded');
});

test.serial('upstream failure: failed with an error text, full automatic refund; a failed avatar can be deleted', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'dh-a', fault: { type: 'fail' }, times: 1, match: '/dh/v1/tasks' });
  const rec = (await (await create(a.key, AVATAR)).json()) as any;
  t.is(await gw.deps.wallet.balance(a.id), GRANT - CREATION);
  const done = await settled(a.key, rec.id);
  t.is(done.status, 'failed');
  t.is(typeof done.error, 'string');
  t.true(done.error.length > 0);
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
  const usage = await gw.deps.db.Usage.findById(rec.id).lean();
  t.is(usage?.status, 'error');
  t.is(usage?.cost_nano, 0);
  // a failed avatar is not usable
  const use = await send('POST', a.key, '/v1/videos/generations', { model: 'dh-avatar', avatar: rec.id, audio_url: 'https://cdn.example.com/s.mp3', duration: 3 });
  t.is(use.status, 400);
  t.is((await send('DELETE', a.key, `/v1/videos/avatars/${rec.id}`)).status, 200);
});

test.serial('upstream 4xx at creation: failed, not charged', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'dh-a', fault: { type: 'submit_status', status: 400, body: { error: { code: 'invalid_request', message: 'source image has no face' } } }, times: 1, match: '/dh/v1/tasks' });
  const rec = (await (await create(a.key, AVATAR)).json()) as any;
  const done = await settled(a.key, rec.id);
  t.is(done.status, 'failed');
  t.is(done.error, 'source image has no face');
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
});

test.serial('upstream 5xx on the first channel: the next channel creates it', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'dh-a', fault: { type: 'submit_status', status: 503 }, times: 1, match: '/dh/v1/tasks' });
  const rec = (await (await create(a.key, AVATAR)).json()) as any;
  t.is((await settled(a.key, rec.id)).status, 'ready');
  const doc = (await gw.deps.db.Task.findById(rec.id).lean())!;
  t.is(doc.upstream?.channel, 'dh-b');
  t.is(await gw.deps.wallet.balance(a.id), GRANT - CREATION);
});

test.serial('delete while pending is 400 invalid_request_error and changes nothing', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'dh-a', fault: { type: 'hang' }, times: 1, match: '/dh/v1/tasks' });
  const rec = (await (await create(a.key, AVATAR)).json()) as any;
  // the upstream has the task (and took the fault) before this test goes on
  for (let i = 0; i < 200 && !(await gw.deps.db.Task.findById(rec.id).lean())?.upstream?.task_id; i++) await new Promise((r) => setTimeout(r, 25));
  const del = await send('DELETE', a.key, `/v1/videos/avatars/${rec.id}`);
  t.is(del.status, 400);
  t.is(((await del.json()) as any).error.code, 'invalid_request_error');
  const again = (await (await send('GET', a.key, `/v1/videos/avatars/${rec.id}`)).json()) as any;
  t.is(again.status, 'pending');
  // a pending avatar is not usable either
  const use = await send('POST', a.key, '/v1/videos/generations', { model: 'dh-avatar', avatar: rec.id, audio_url: 'https://cdn.example.com/s.mp3', duration: 3 });
  t.is(use.status, 400);
  await gw.deps.temporal.workflow.getHandle(rec.id).terminate('test over').catch(() => undefined);
});
