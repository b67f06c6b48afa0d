import test from 'ava';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { startGateway, type TestGateway } from '../helpers/stack';
import { createApp } from '../../gateway/app';
import { createLogger } from '../../infra/logger';

/**
 * Isolation and secrets (issue 14 section 5): account B tries every read and
 * write of account A's resources (tasks of every media family, avatars,
 * voices, usage rows, the CSV export, idempotency replays) and gets 404 with
 * no data, or its own separate resource; management routes refuse API keys
 * and wrong tokens; and no line the gateway logged during the whole file
 * holds an API key, the admin token or KEY_ENCRYPTION_KEY (keys sent as
 * `?key=` and `x-goog-api-key` included). Knowledge bases and pages are not
 * in main yet: add them here when they land.
 */

const lines: string[] = [];
const sink = new Writable({ write(chunk, _e, cb) { lines.push(String(chunk)); cb(); } });

let gw: TestGateway;
let server: Server;
let url: string;
interface Acct { id: string; key: string }
let A: Acct;
let B: Acct;

const send = async (key: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const h: Record<string, string> = { ...headers };
  if (key) h.authorization = `Bearer ${key}`;
  if (body !== undefined) h['content-type'] = 'application/json';
  const res = await fetch(url + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, trace: res.headers.get('x-gateway-trace') ?? '' };
};

/** What A made, by family: the path its id is read at, and the id. */
const made: Array<{ family: string; path: string; id: string; secret: string }> = [];
const traces: string[] = [];
const SECRET_TEXT = 'zq-iso-secret';

test.before(async () => {
  gw = await startGateway({}, { simulator: true, worker: true, mediaDelayMs: 0 });
  server = createApp({ ...gw.deps, log: createLogger('debug', {}, sink) }).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const account = async (): Promise<Acct> => {
    const a = await gw.newAccount();
    await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: '500' });
    return { id: a.id, key: (await gw.newKey(a.id)).key };
  };
  A = await account();
  B = await account();

  const create = async (family: string, path: string, readPath: string, body: unknown, headers: Record<string, string> = {}) => {
    const r = await send(A.key, 'POST', path, body, headers);
    if (r.status !== 200) throw new Error(`${family}: ${r.status} ${r.text}`);
    traces.push(r.trace);
    const id = r.json.id ?? r.json.voice_id;
    made.push({ family, path: readPath, id, secret: SECRET_TEXT });
    return r.json;
  };
  await create('image', '/v1/images/generations', '/v1/images/generations', { model: 'gpt-image-1', prompt: `${SECRET_TEXT} fox`, async: true }, { 'Idempotency-Key': 'iso-img' });
  await create('image edit', '/v1/images/edits', '/v1/images/edits', { model: 'gpt-image-1', prompt: `${SECRET_TEXT} edit`, image: 'https://example.com/a.png', async: true });
  await create('video', '/v1/videos/generations', '/v1/videos/generations', { model: 'seedance-1-0-pro', content: [{ type: 'text', text: `${SECRET_TEXT} cat` }] });
  const avatar = await create('avatar', '/v1/videos/avatars', '/v1/videos/avatars', { name: SECRET_TEXT, source_url: 'https://cdn.example.com/anna.jpg' });
  await create('digital human', '/v1/videos/generations', '/v1/videos/generations', { model: 'dh-avatar', avatar: 'preset_anna', audio_url: 'https://cdn.example.com/speech.mp3?dur=7', duration: 20 });
  await create('clip', '/v1/videos/generations', '/v1/videos/generations', { model: 'clip-realman', style_id: 'tpl_rm_vlog_01', source_video_url: 'https://cdn.example.com/talk.mp4?dur=42' });
  await create('music', '/v1/music/generations', '/v1/music/generations', { model: 'suno-v4-5', prompt: `[Verse]\n${SECRET_TEXT}`, title: 'Iso', tags: 'lofi' });
  await create('speech', '/v1/audio/speech', '/v1/audio/speech', { model: 'speech-2-5-hd', text: `${SECRET_TEXT} speak`, voice_id: 'male-qn-qingse', async: true });
  await create('voice', '/v1/audio/voices', '/v1/audio/voices', { audio_url: 'https://cdn.example.com/my-voice.mp3', name: SECRET_TEXT });
  void avatar;
  const t1 = await send(A.key, 'POST', '/v1/transcripts/extract', { url: 'https://v.example.com/share/abc123?dur=20&lang=en' });
  traces.push(t1.trace);
  const chat = await send(A.key, 'POST', '/v1/chat/completions', { model: 'gpt-5.1', max_tokens: 8, messages: [{ role: 'user', content: SECRET_TEXT }] });
  traces.push(chat.trace);
});

test.after.always(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await gw?.close();
});

/** The cells of one CSV line (RFC 4180 quoting). */
function csvCells(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') (cur += '"'), i++;
      else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') out.push(cur), (cur = '');
    else cur += ch;
  }
  out.push(cur);
  return out;
}

/** A 404 in the endpoint's error shape and nothing else: no task fields, no data. */
function assertNotFound(t: any, r: Awaited<ReturnType<typeof send>>, what: string) {
  t.is(r.status, 404, `${what}: ${r.text}`);
  t.truthy(r.json?.error, what);
  t.deepEqual(Object.keys(r.json).filter((k) => k !== 'error' && k !== 'type'), [], `${what}: nothing but the error`);
  t.false(r.text.includes(SECRET_TEXT), `${what} leaks A's content`);
}

test.serial("every task family: A reads its own, B gets 404 with no data", async (t) => {
  t.is(made.length, 9);
  for (const m of made) {
    const own = await send(A.key, 'GET', `${m.path}/${m.id}`);
    t.true(own.status === 200 || own.status === 202, `${m.family}: A reads its own (${own.status} ${own.text})`);
    assertNotFound(t, await send(B.key, 'GET', `${m.path}/${m.id}`), `${m.family} read by B`);
  }
});

test.serial("lists: B's lists of every family hold none of A's resources", async (t) => {
  const ids = made.map((m) => m.id);
  for (const path of ['/v1/images/generations', '/v1/videos/generations', '/v1/music/generations', '/v1/audio/speech', '/v1/audio/voices', '/v1/videos/avatars']) {
    const r = await send(B.key, 'GET', path);
    t.is(r.status, 200, `${path}: ${r.text}`);
    for (const id of ids) t.false(r.text.includes(id), `${path} lists A's ${id}`);
    t.false(r.text.includes(SECRET_TEXT), `${path} leaks A's content`);
    // A query naming A's account changes nothing.
    const q = await send(B.key, 'GET', `${path}?account_id=${A.id}`);
    for (const id of ids) t.false(q.text.includes(id), `${path}?account_id lists A's ${id}`);
  }
});

test.serial("writes: B cannot delete A's avatar, fetch A's music assets, or use A's voice or avatar", async (t) => {
  const avatar = made.find((m) => m.family === 'avatar')!;
  assertNotFound(t, await send(B.key, 'DELETE', `/v1/videos/avatars/${avatar.id}`), 'avatar delete by B');
  t.is((await send(A.key, 'GET', `/v1/videos/avatars/${avatar.id}`)).status, 200, 'the avatar is still there');

  const music = made.find((m) => m.family === 'music')!;
  assertNotFound(t, await send(B.key, 'POST', '/v1/music/assets', { generation_id: music.id }), 'music assets by B');

  const voice = made.find((m) => m.family === 'voice')!;
  const speak = await send(B.key, 'POST', '/v1/audio/speech', { model: 'speech-2-5-hd', text: 'hi', voice_id: voice.id });
  t.true(speak.status === 400 || speak.status === 404, `speech with A's voice: ${speak.status} ${speak.text}`);
  const dh = await send(B.key, 'POST', '/v1/videos/generations', { model: 'dh-avatar', avatar: avatar.id, audio_url: 'https://cdn.example.com/speech.mp3?dur=7', duration: 20 });
  t.true(dh.status === 400 || dh.status === 404, `digital human with A's avatar: ${dh.status} ${dh.text}`);
  t.false(speak.text.includes(SECRET_TEXT) || dh.text.includes(SECRET_TEXT));
});

test.serial("idempotency: B replaying A's Idempotency-Key and body gets its own task, never A's answer", async (t) => {
  const a = made.find((m) => m.family === 'image')!;
  const r = await send(B.key, 'POST', '/v1/images/generations', { model: 'gpt-image-1', prompt: `${SECRET_TEXT} fox`, async: true }, { 'Idempotency-Key': 'iso-img' });
  t.is(r.status, 200, r.text);
  t.not(r.json.id, a.id);
  const again = await send(B.key, 'POST', '/v1/images/generations', { model: 'gpt-image-1', prompt: `${SECRET_TEXT} fox`, async: true }, { 'Idempotency-Key': 'iso-img' });
  t.is(again.json.id, r.json.id, "B's own replay answers B's task");
  assertNotFound(t, await send(A.key, 'GET', `/v1/images/generations/${r.json.id}`), "B's task read by A");
});

test.serial("usage rows and the CSV export: B sees none of A's calls, whatever the query", async (t) => {
  const own = await send(A.key, 'GET', '/api/v1/usage?limit=1000');
  t.is(own.status, 200);
  for (const tr of traces) t.true(own.text.includes(tr), `A sees its own call ${tr}`);
  const aIds = new Set([...traces, ...made.map((m) => m.id)]);
  // B's own rows may echo an id B itself sent (a refused call naming A's voice): only whose rows they are matters.
  for (const path of ['/api/v1/usage?limit=1000', `/api/v1/usage?limit=1000&account_id=${A.id}`]) {
    const r = await send(B.key, 'GET', path);
    t.is(r.status, 200, `${path}: ${r.text}`);
    t.true(r.json.data.length > 0, "B's own rows are there");
    for (const row of r.json.data) {
      t.false(aIds.has(row.id) || aIds.has(row.request_id) || aIds.has(row.task_id), `${path} shows A's row ${row.id}`);
      t.false(JSON.stringify(row).includes(SECRET_TEXT) && !row.error_message, `${path} leaks A's content`);
    }
  }
  for (const path of ['/api/v1/usage/export', `/api/v1/usage/export?account_id=${A.id}`]) {
    const r = await send(B.key, 'GET', path);
    t.is(r.status, 200, `${path}: ${r.text}`);
    const [header, ...rows] = r.text.trim().split('\n');
    const cols = csvCells(header);
    t.true(rows.length > 0);
    for (const line of rows) {
      const cells = csvCells(line);
      for (const c of ['id', 'request_id', 'task_id']) t.false(aIds.has(cells[cols.indexOf(c)]), `${path} shows A's row: ${line}`);
    }
  }
  const balance = await send(B.key, 'GET', '/v1/key/balance');
  t.is(balance.status, 200);
});

test.serial('management routes refuse API keys, wrong tokens and no token', async (t) => {
  const attempts: Array<[string, Record<string, string>]> = [
    ['API key as bearer', { authorization: `Bearer ${A.key}` }],
    ['API key as x-api-key', { 'x-api-key': A.key }],
    ['wrong token', { authorization: `Bearer ${gw.config.ADMIN_TOKEN}x` }],
    ['token prefix', { authorization: `Bearer ${gw.config.ADMIN_TOKEN.slice(0, -1)}` }],
    ['no token', {}],
  ];
  const routes: Array<[string, string, unknown?]> = [
    ['GET', `/admin/v1/accounts/${A.id}`],
    ['GET', `/admin/v1/accounts/${A.id}/keys`],
    ['GET', `/admin/v1/accounts/${A.id}/ledger`],
    ['POST', `/admin/v1/accounts/${B.id}/topups`, { amount_usd: '1000' }],
    ['POST', '/admin/v1/accounts', { name: 'intruder' }],
    ['POST', `/admin/v1/accounts/${B.id}/keys`, { name: 'stolen' }],
  ];
  for (const [what, headers] of attempts) {
    for (const [method, path, body] of routes) {
      const r = await send(null, method, path, body, headers);
      t.is(r.status, 401, `${what} ${method} ${path}: ${r.text}`);
      t.false(r.text.includes(A.id) && method === 'GET' && r.status === 200);
    }
    const q = await send(null, 'GET', `/admin/v1/accounts/${A.id}?key=${A.key}`);
    t.is(q.status, 401, `?key= on a management route (${what})`);
  }
  // Nothing those attempts sent moved money or made keys.
  const bal = await send(B.key, 'GET', '/v1/key/balance');
  t.is(bal.status, 200);
  const view = await gw.admin('GET', `/accounts/${B.id}/keys`);
  t.is(view.body.data?.length ?? view.body.length, 1, 'no key was made for B');
});

test.serial('no log line holds an API key, the admin token or KEY_ENCRYPTION_KEY (keys sent as ?key= included)', async (t) => {
  // Keys in every place a client may put them, valid and not.
  const body = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
  for (const k of [A.key, `${B.key.slice(0, -4)}zzzz`]) {
    await send(null, 'POST', `/v1beta/models/gemini-2.5-flash:generateContent?key=${k}`, body);
    await send(null, 'POST', `/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=${k}`, body);
    await send(null, 'POST', '/v1beta/models/gemini-2.5-flash:generateContent', body, { 'x-goog-api-key': k });
    await send(null, 'GET', '/v1/key/balance', undefined, { 'x-api-key': k });
    await send(null, 'GET', `/v1/images/generations/nope?key=${k}`);
    await send(null, 'GET', `/admin/v1/accounts?token=${gw.config.ADMIN_TOKEN}&key=${k}`);
  }
  await new Promise((r) => setTimeout(r, 100));
  const text = lines.join('');
  const count = text.split('\n').filter(Boolean).length;
  t.log(`${count} log lines scanned`);
  t.true(count > 50, 'the file logged its traffic');
  const secrets: Array<[string, string]> = [
    ['A key', A.key], ['B key', B.key], ['A key body', A.key.slice(-40)], ['B key body', B.key.slice(-40)],
    ['admin token', gw.config.ADMIN_TOKEN], ['KEY_ENCRYPTION_KEY', gw.config.KEY_ENCRYPTION_KEY],
  ];
  for (const [what, s] of secrets) t.false(text.includes(s), `${what} reached the log`);
});
