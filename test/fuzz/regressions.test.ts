import http from 'node:http';
import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';

/**
 * The defects the schemathesis runs found, each pinned by the request that
 * found it (docs/fuzzing.md lists them): every one answered a 5xx.
 */

let gw: TestGateway;
let account: string;
let key: string;

test.before(async () => {
  gw = await startGateway();
  account = (await gw.newAccount({ name: 'regressions', enterprise: true })).id;
  key = (await gw.newKey(account)).key;
});

test.after.always(async () => {
  await gw?.close();
});

/** A request fetch refuses to send (TRACE): node:http. */
function trace(path: string, headers: Record<string, string> = {}): Promise<{ status: number; allow: string; json: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${gw.url}${path}`, { method: 'TRACE', headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, allow: String(res.headers.allow ?? ''), json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function call(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) {
  const res = await fetch(`${gw.url}${path}`, { method, headers: init.headers, body: init.body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: (() => { try { return JSON.parse(text); } catch { return undefined; } })() };
}
const admin = () => ({ authorization: `Bearer ${gw.config.ADMIN_TOKEN}` });

test('a method the router does not know (TRACE) on a served path is a 405 with Allow, not a 501', async (t) => {
  const r = await trace('/v1/chat/completions', { authorization: `Bearer ${key}` });
  t.is(r.status, 405);
  t.regex(r.allow, /POST/);
  t.is(r.json?.error?.code, 'invalid_request');
  const g = await trace('/v1beta/models/gemini-2.5-flash:generateContent');
  t.is(g.status, 405);
  t.is(g.json?.error?.status, 'UNIMPLEMENTED');
});

test('a ledger cursor that is not one is a 400, not a 500', async (t) => {
  const r = await call('GET', `/admin/v1/accounts/${account}/ledger?before=not-a-cursor`, { headers: admin() });
  t.is(r.status, 400);
  t.is(r.json?.error?.param, 'before');
  const ok = await call('GET', `/admin/v1/accounts/${account}/ledger?before=${Date.now()}`, { headers: admin() });
  t.is(ok.status, 200);
});

test('an agent-key audit cursor past the range of a date is a 400, not a 500', async (t) => {
  const r = await call('GET', `/admin/v1/accounts/${account}/agent-keys/audit?before=9007199254740990`, { headers: admin() });
  t.is(r.status, 400);
  t.is(r.json?.error?.param, 'before');
});

test('importing a key already registered is a 409, not a 500; a short key is a 400', async (t) => {
  const legacy = `sk-legacy01-${'c'.repeat(64)}`;
  const first = await call('POST', `/admin/v1/accounts/${account}/keys/import-legacy`, { headers: { ...admin(), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'old', key: legacy }) });
  t.is(first.status, 201);
  const again = await call('POST', `/admin/v1/accounts/${account}/keys/import-legacy`, { headers: { ...admin(), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'old', key: legacy }) });
  t.is(again.status, 409);
  t.is(again.json?.error?.param, 'key');
  const short = await call('POST', `/admin/v1/accounts/${account}/keys/import-legacy`, { headers: { ...admin(), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'old', key: '' }) });
  t.is(short.status, 400);
});

test('an images field the store cannot hold (arrays in arrays, a $ name) is a 400 naming it, not a 500', async (t) => {
  const post = (extra: Record<string, unknown>) => call('POST', '/v1/images/generations', {
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-image-1', prompt: 'a fox', async: true, ...extra }),
  });
  const nested = await post({ extra: { k: [0.5, [1]] } });
  t.is(nested.status, 400);
  t.is(nested.json?.error?.param, 'extra.k');
  const dollar = await post({ $where: 'x' });
  t.is(dollar.status, 400);
  t.is(dollar.json?.error?.param, '$where');
});

test('a multipart part without a name is a 400, not a 500', async (t) => {
  const boundary = 'b0undary';
  const body = [`--${boundary}`, 'content-disposition: form-data', '', 'orphan', `--${boundary}`, 'content-disposition: form-data; name="prompt"', '', 'a fox', `--${boundary}--`, ''].join('\r\n');
  const r = await call('POST', '/v1/images/edits', { headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
  t.is(r.status, 400);
  t.regex(r.json?.error?.message ?? '', /needs a name/);
});
