import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { AUTH_MESSAGES, QUOTA_MESSAGE } from '../../domain/errors';

let gw: TestGateway;
let account: { id: string };
let key: string;
let keyId: string;

test.before(async () => {
  gw = await startGateway();
  account = await gw.newAccount();
  const k = await gw.newKey(account.id);
  key = k.key;
  keyId = k.id;
});
test.after.always(async () => gw?.close());

const balance = (headers: Record<string, string>, query = '') => fetch(`${gw.url}/v1/key/balance${query}`, { headers });
const errorOf = async (res: Response) => ((await res.json()) as { error: { message: string; code: string; type: string } }).error;

test('key format: sk- + 8-char tag + - + 64 hex, prefix 12, total 76', (t) => {
  t.regex(key, /^sk-[a-z0-9]{8}-[0-9a-f]{64}$/);
  t.is(key.length, 76);
});

test('each of the four methods authenticates the balance endpoint', async (t) => {
  for (const [headers, query] of [
    [{ 'x-api-key': key }, ''],
    [{ 'x-goog-api-key': key }, ''],
    [{}, `?key=${key}`],
    [{ authorization: `Bearer ${key}` }, ''],
  ] as const) {
    const res = await balance(headers, query);
    t.is(res.status, 200, JSON.stringify(headers) + query);
    t.truthy(res.headers.get('x-gateway-trace'));
  }
});

test('priority order: the first present method wins, even when a later one is valid', async (t) => {
  const bad = `sk-mgateway-${'0'.repeat(64)}`;
  // x-api-key (bad) beats a valid Bearer
  t.is((await balance({ 'x-api-key': bad, authorization: `Bearer ${key}` })).status, 401);
  // x-api-key (good) beats a bad x-goog-api-key
  t.is((await balance({ 'x-api-key': key, 'x-goog-api-key': bad })).status, 200);
  // x-goog-api-key (bad) beats ?key= (good)
  t.is((await balance({ 'x-goog-api-key': bad }, `?key=${key}`)).status, 401);
  // ?key= (bad) beats Bearer (good)
  t.is((await balance({ authorization: `Bearer ${key}` }, `?key=${bad}`)).status, 401);
  // ?key= (good) beats Bearer (bad)
  t.is((await balance({ authorization: `Bearer ${bad}` }, `?key=${key}`)).status, 200);
});

test('the five 401 messages, exactly, all invalid_api_key', async (t) => {
  let res = await balance({});
  t.is(res.status, 401);
  let err = await errorOf(res);
  t.is(err.code, 'invalid_api_key');
  t.is(err.type, 'authentication_error');
  t.true(err.message.startsWith('authentication failed: missing or malformed api key ('));

  err = await errorOf(await balance({ authorization: 'Bearer sk-short' }));
  t.true(err.message.startsWith('authentication failed: missing or malformed api key ('));

  err = await errorOf(await balance({ authorization: `Bearer sk-mgateway-${'a'.repeat(64)}` }));
  t.is(err.message, AUTH_MESSAGES.invalid);

  const a2 = await gw.newAccount();
  const revoked = await gw.newKey(a2.id);
  await gw.admin('PATCH', `/keys/${revoked.id}`, { enabled: false });
  err = await errorOf(await balance({ authorization: `Bearer ${revoked.key}` }));
  t.is(err.message, AUTH_MESSAGES.revoked);

  const expired = await gw.newKey(a2.id, { expires_at: Math.floor(Date.now() / 1000) - 5 });
  err = await errorOf(await balance({ authorization: `Bearer ${expired.key}` }));
  t.is(err.message, AUTH_MESSAGES.expired);

  const live = await gw.newKey(a2.id);
  t.is((await balance({ authorization: `Bearer ${live.key}` })).status, 200);
  await gw.admin('PATCH', `/accounts/${a2.id}`, { status: 'inactive' });
  err = await errorOf(await balance({ authorization: `Bearer ${live.key}` }));
  t.is(err.message, AUTH_MESSAGES.inactive);
});

test('GET /v1/models accepts Bearer and x-api-key only; ?key= gives 401', async (t) => {
  t.is((await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
  t.is((await fetch(`${gw.url}/v1/models`, { headers: { 'x-api-key': key } })).status, 200);
  const q = await fetch(`${gw.url}/v1/models?key=${key}`);
  t.is(q.status, 401);
  t.is((await errorOf(q)).code, 'invalid_api_key');
  t.is((await fetch(`${gw.url}/v1/models`, { headers: { 'x-goog-api-key': key } })).status, 401);
});

test('disable, delete and expiry take effect on the very next request', async (t) => {
  const k = await gw.newKey(account.id);
  const h = { authorization: `Bearer ${k.key}` };
  t.is((await balance(h)).status, 200);
  await gw.admin('PATCH', `/keys/${k.id}`, { enabled: false });
  t.is((await errorOf(await balance(h))).message, AUTH_MESSAGES.revoked);
  await gw.admin('PATCH', `/keys/${k.id}`, { enabled: true });
  t.is((await balance(h)).status, 200);
  await gw.admin('PATCH', `/keys/${k.id}`, { expires_at: Math.floor(Date.now() / 1000) - 1 });
  t.is((await errorOf(await balance(h))).message, AUTH_MESSAGES.expired);
  await gw.admin('PATCH', `/keys/${k.id}`, { expires_at: null });
  t.is((await balance(h)).status, 200);
  const del = await gw.admin('DELETE', `/keys/${k.id}`);
  t.true(del.body.deleted);
  t.is((await errorOf(await balance(h))).message, AUTH_MESSAGES.invalid);
});

test('reveal returns the plaintext; hash-only legacy keys work but cannot be revealed', async (t) => {
  const r = await gw.admin('GET', `/keys/${keyId}/reveal`);
  t.is(r.status, 200);
  t.is(r.body.key, key);
  const legacyPlain = `sk-mgateway-${'b'.repeat(64)}`;
  const legacy = await gw.admin('POST', `/accounts/${account.id}/keys/import-legacy`, { name: 'old', key: legacyPlain });
  t.is(legacy.status, 201);
  t.false(legacy.body.revealable);
  t.is((await balance({ authorization: `Bearer ${legacyPlain}` })).status, 200);
  const rv = await gw.admin('GET', `/keys/${legacy.body.id}/reveal`);
  t.is(rv.status, 409);
  t.regex(rv.body.error.message, /cannot be revealed/);
  // Stored encrypted: the plaintext is not in the key document.
  const doc = await gw.deps.db.ApiKey.findById(keyId).lean();
  t.false(JSON.stringify(doc).includes(key.slice(12)));
});

test('balance 0 gives 402 with the Chinese message on billable endpoints, not on balance, billing or models', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  await gw.deps.wallet.apply({ opId: `${a.id}:drain`, accountId: a.id, kind: 'adjust', amountNano: -40_440_000_000 });
  const h = { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' };
  const emb = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: h, body: JSON.stringify({ model: 'text-embedding-3-small', input: 'x' }) });
  t.is(emb.status, 402);
  const err = await errorOf(emb);
  t.is(err.code, 'quota_exceeded');
  t.is(err.type, 'insufficient_quota');
  t.is(err.message, QUOTA_MESSAGE);
  t.is((await balance(h)).status, 200);
  t.is((await fetch(`${gw.url}/v1/dashboard/billing/subscription`, { headers: h })).status, 200);
  t.is((await fetch(`${gw.url}/dashboard/billing/usage`, { headers: h })).status, 200);
  t.is((await fetch(`${gw.url}/v1/models`, { headers: h })).status, 200);
});

test('every error carries x-gateway-trace, unknown routes included', async (t) => {
  const r = await fetch(`${gw.url}/v1/nope`);
  t.is(r.status, 404);
  t.regex(r.headers.get('x-gateway-trace') ?? '', /^req_[0-9a-f]{24}$/);
  const bad = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: '{not json' });
  t.is(bad.status, 400);
  t.is((await errorOf(bad)).code, 'invalid_request');
  t.truthy(bad.headers.get('x-gateway-trace'));
});

test('the key list of an account that does not exist is 404, like its ledger and a new key on it', async (t) => {
  for (const [method, path, body] of [
    ['GET', '/accounts/acct_nope/keys', undefined],
    ['GET', '/accounts/acct_nope/ledger', undefined],
    ['POST', '/accounts/acct_nope/keys', { name: 'x' }],
  ] as const) {
    const res = await gw.admin(method, path, body);
    t.is(res.status, 404, `${method} ${path}`);
    t.like(res.body.error, { code: 'not_found', message: 'no account acct_nope' });
  }
  t.is((await gw.admin('GET', `/accounts/${account.id}/keys`)).body.data.length >= 1, true);
});
