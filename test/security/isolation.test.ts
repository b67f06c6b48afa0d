import test from 'ava';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { startGateway, type TestGateway } from '../helpers/stack';
import { createApp } from '../../gateway/app';
import { createLogger } from '../../platform/logger';

/**
 * Isolation and secrets (issue 14 section 5): account B tries every read and
 * write of account A's resources (tasks of every media family, avatars,
 * voices, usage rows, the CSV export, idempotency replays) and gets 404 with
 * no data, or its own separate resource; management routes refuse API keys
 * and wrong tokens; and no line the gateway logged during the whole file
 * holds an API key, the admin token or KEY_ENCRYPTION_KEY (keys sent as
 * `?key=` and `x-goog-api-key` included). Knowledge bases: B gets 404 and no
 * data for A's bases, pages, sources, tags and search, on REST, MCP and the
 * Dify endpoint, and A's files only through A's signed links.
 */

const lines: string[] = [];
const sink = new Writable({ write(chunk, _e, cb) { lines.push(String(chunk)); cb(); } });

let gw: TestGateway;
let server: Server;
let url: string;
interface Acct { id: string; key: string }
let A: Acct;
let B: Acct;
/** An enterprise with a team base that neither A nor B may read. */
let ENT: Acct;
let TEAM_KB: string;

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

  // Knowledge: a page in A's personal base, and a team base of an enterprise A's key belongs to.
  const doc = `# Vault Procedure\n\nThe ${SECRET_TEXT} vault opens with two keys. #vaultops\n\n## Audit\n\nEvery opening of the Vault Procedure is logged.`;
  const ent = await gw.newAccount({ enterprise: true });
  ENT = { id: ent.id, key: (await gw.newKey(ent.id)).key };
  TEAM_KB = `iso-team-${Date.now().toString(36)}`;
  if ((await gw.admin('POST', `/accounts/${ENT.id}/kbs`, { kb_id: TEAM_KB, name: 'Iso team', readers: 'all' })).status !== 201) throw new Error('team base not made');
  for (const [acct, kb] of [[A.id, 'default'], [ENT.id, TEAM_KB]]) {
    const up = await gw.admin('POST', `/accounts/${acct}/kbs/${kb}/documents`, { filename: 'vault.md', content: doc });
    if (up.status !== 202) throw new Error(`upload: ${JSON.stringify(up.body)}`);
    for (let i = 0; ; i++) {
      const b = await gw.admin('GET', `/accounts/${acct}/kbs/${kb}/builds/${up.body.id}`);
      if (b.body.state === 'succeeded') break;
      if (b.body.state === 'failed' || i > 1500) throw new Error(`build: ${JSON.stringify(b.body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
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

test.serial("knowledge: B gets 404 and no data for A's bases, pages, sources and tags; B's searches find nothing of A's (REST, MCP, Dify)", async (t) => {
  const hits = await send(A.key, 'GET', `/api/v1/ext/wiki/search?q=${SECRET_TEXT}%20vault`);
  t.is(hits.status, 200, hits.text);
  t.true(hits.json.total_hits > 0, 'A finds its own page');
  const page = hits.json.results[0].id as string;
  const teamHits = await send(ENT.key, 'GET', `/api/v1/ext/wiki/search?q=vault&kb_id=${TEAM_KB}`);
  t.true(teamHits.json.total_hits > 0);
  const teamPage = teamHits.json.results[0].id as string;
  const own = await send(A.key, 'GET', `/api/v1/ext/wiki/pages/${page}/source`);
  t.is(own.status, 200);

  // Pages of A's personal base, asked by id in B's own base: 404 in the chat-completions shape, nothing else.
  for (const path of [`/pages/${page}`, `/pages/${page}/backlinks`, `/pages/${page}/source`]) {
    assertNotFound(t, await send(B.key, 'GET', `/api/v1/ext/wiki${path}`), `${path} by B`);
    assertNotFound(t, await send(B.key, 'GET', `/api/v1/ext/wiki${path}?kb_id=${TEAM_KB}`), `${path} in a team base B cannot read`);
  }
  // Another account's team base, named by kb_id, on every endpoint that takes one: 404.
  for (const path of [`/search?q=vault&kb_id=${TEAM_KB}`, `/tags?kb_id=${TEAM_KB}`, `/tags/vaultops?kb_id=${TEAM_KB}`, `/pages?ids=${teamPage}&kb_id=${TEAM_KB}`,
    `/pages/${teamPage}?kb_id=${TEAM_KB}`, `/pages/${teamPage}/backlinks?kb_id=${TEAM_KB}`, `/pages/${teamPage}/source?kb_id=${TEAM_KB}`]) {
    assertNotFound(t, await send(B.key, 'GET', `/api/v1/ext/wiki${path}`), `${path} by B`);
    assertNotFound(t, await send(A.key, 'GET', `/api/v1/ext/wiki${path}`), `${path} by A (not a member)`);
  }
  // B's own base: searching, tags and a batch read of A's ids show nothing of A's.
  for (const path of [`/search?q=${SECRET_TEXT}%20vault%20procedure`, '/tags', '/tags/vaultops', `/pages?ids=${page},${teamPage}`, '/kbs']) {
    const r = await send(B.key, 'GET', `/api/v1/ext/wiki${path}`);
    t.is(r.status, 200, `${path}: ${r.text}`);
    // (A search answer echoes B's own query: only what it found matters.)
    const shown = JSON.stringify({ ...r.json, query: undefined });
    t.false(shown.includes(SECRET_TEXT) || shown.includes('Vault Procedure') || shown.includes(TEAM_KB), `${path} leaks A's knowledge: ${r.text}`);
    if (path.startsWith('/search')) t.is(r.json.total_hits, 0);
    if (path.startsWith('/pages')) t.deepEqual(r.json.data, []);
  }

  // MCP: B's tools see only B's bases.
  const rpc = async (name: string, args: Record<string, unknown>) => {
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${B.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    return { status: res.status, text: await res.text() };
  };
  const search = await rpc('search_wiki', { q: `${SECRET_TEXT} vault procedure` });
  t.is(search.status, 200);
  t.false(search.text.includes('Vault Procedure') || search.text.includes(page) || search.text.includes(teamPage), search.text);
  t.regex(search.text, /"total_hits":0/);
  for (const [tool, args] of [['read_page', { id: page }], ['read_pages', { ids: [page, teamPage] }], ['backlinks', { id: teamPage }], ['get_source', { id: page }], ['list_by_tag', { tag: 'vaultops' }]] as const) {
    const r = await rpc(tool, args);
    t.is(r.status, 200, `${tool}: ${r.text}`);
    t.false(r.text.includes(SECRET_TEXT) || r.text.includes('Vault Procedure') || r.text.includes('/kb/files/'), `${tool} leaks A's knowledge: ${r.text}`);
  }

  // Dify: A's team base by id is 2001 (404); B's own search finds nothing of A's.
  const dify = async (knowledge_id: string) => send(B.key, 'POST', '/api/v1/integrations/dify/retrieval', { knowledge_id, query: `${SECRET_TEXT} vault`, retrieval_setting: { top_k: 5, score_threshold: 0 } });
  const foreign = await dify(TEAM_KB);
  t.is(foreign.status, 404);
  t.is(foreign.json.error_code, 2001);
  t.false(foreign.text.includes(SECRET_TEXT));
  for (const kb of ['default', '*']) {
    const r = await dify(kb);
    t.is(r.status, 200);
    t.deepEqual(r.json.records, [], `Dify ${kb}`);
  }

  // Files: only A's signed link gives A's file; the same path with a signature for another path, or none, gives no data.
  const link = new URL(own.json.url);
  const file = await fetch(`${url}${link.pathname}${link.search}`);
  t.is(file.status, 200);
  t.true((await file.text()).includes(SECRET_TEXT));
  const bSource = await send(ENT.key, 'GET', `/api/v1/ext/wiki/pages/${teamPage}/source?kb_id=${TEAM_KB}`);
  const other = new URL(bSource.json.url);
  for (const bad of [`${link.pathname}`, `${link.pathname}?expires=${other.searchParams.get('expires')}&sig=${other.searchParams.get('sig')}`]) {
    const r = await fetch(`${url}${bad}`);
    const text = await r.text();
    t.true(r.status === 403 || r.status === 404, `${bad}: ${r.status}`);
    t.false(text.includes(SECRET_TEXT), `${bad} leaks the file`);
  }
});
