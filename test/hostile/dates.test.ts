import test from 'ava';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import type { TestGateway } from '../helpers/stack';
import { createApp } from '../../gateway/app';
import { createLogger } from '../../platform/logger';
import { assertShape, send, world } from './kit';

// One date parser (domain/instant.ts) for every `from`/`to` and `expires_at`: an unrepresentable or
// malformed date is a 400 naming the field, never an invalid Date handed to the store (500); and the
// access log line records the status the client got.

let gw: TestGateway;
let key: string;
let url: string;
let server: Server;
const lines: Array<Record<string, any>> = [];
test.before(async () => {
  ({ gw, key } = await world());
  // The same gateway, with its access log captured.
  const sink = new Writable({ write(chunk, _enc, cb) { for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l)); cb(); } });
  server = createApp({ ...gw.deps, log: createLogger('info', {}, sink) }).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
test.after.always(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await gw?.close();
});

const LISTS = ['/v1/images/generations', '/v1/videos/generations', '/v1/music/generations', '/v1/audio/speech', '/api/v1/usage', '/api/v1/usage/export'];
const BAD = ['99999999999999', '999999999999999999999', '1e20', '-1', '10000-01-01', '+275760-09-13', '2026-02-30', '2026-13-01', '2026-10-16T25:00:00Z', '2026-10-16T10:00:00', 'yesterday', 'NaN', '0x10'];

test('unrepresentable or malformed from/to on every list: 400 naming the field, and the log says 400', async (t) => {
  const traces = new Set<string>();
  for (const path of LISTS) {
    for (const param of ['from', 'to']) {
      for (const bad of BAD) {
        const r = await send(url, 'GET', `${path}?${param}=${encodeURIComponent(bad)}`, { key });
        t.is(r.status, 400, `${path} ${param}=${bad}: ${r.text}`);
        traces.add(r.headers.get('x-gateway-trace')!);
        assertShape(t, r, 'openai', `${path} ${param}=${bad}`);
        t.is(r.json?.error?.param, param, `${path} ${param}=${bad}`);
        t.regex(r.json?.error?.message ?? '', /Unix seconds, RFC 3339 or YYYY-MM-DD/);
      }
    }
  }
  await new Promise((r) => setTimeout(r, 50));
  const logged = lines.filter((l) => l.msg === 'request' && traces.has(l.trace));
  t.is(logged.length, LISTS.length * 2 * BAD.length);
  for (const l of logged) t.is(l.status, 400, JSON.stringify(l));
});

test('the access log records the status the client got, for 404 and 405 and errors raised in handlers', async (t) => {
  const cases: Array<[string, string, number]> = [['PUT', '/v1/key/balance', 405], ['GET', '/v1/nope', 404], ['GET', '/v1/images/generations/task_nope', 404], ['POST', '/v1/chat/completions', 400]];
  for (const [method, path, status] of cases) {
    const r = await send(url, method, path, { key, body: method === 'POST' ? '{' : undefined });
    t.is(r.status, status);
    const trace = r.headers.get('x-gateway-trace');
    await new Promise((res) => setTimeout(res, 20));
    const line = lines.find((l) => l.trace === trace);
    t.is(line?.status, status, `${method} ${path}`);
  }
});

test('the accepted forms still filter, the same on task lists and usage logs', async (t) => {
  for (const path of LISTS.slice(0, 5)) {
    for (const good of ['1760572800', '2026-10-16', '2026-10-16T00:00:00Z', '2026-10-16T02:00:00+02:00', '2026-10-16T02:00:00.250+02:00']) {
      const r = await send(url, 'GET', `${path}?from=${encodeURIComponent(good)}&to=${encodeURIComponent(good)}`, { key });
      t.is(r.status, 200, `${path} ${good}: ${r.text}`);
    }
  }
  // An unencoded `+` of an offset arrives as a space.
  t.is((await send(url, 'GET', '/api/v1/usage?from=2026-10-16T02:00:00+02:00', { key })).status, 200);
});

test('key expiry takes the same parser: an unrepresentable expires_at is a 400 naming it', async (t) => {
  const acc = await gw.newAccount();
  for (const bad of [99999999999999, '99999999999999', '+275760-09-13T00:00:00Z', 'tomorrow', 1.5]) {
    const r = await gw.admin('POST', `/accounts/${acc.id}/keys`, { name: 'k', expires_at: bad });
    t.is(r.status, 400, `${JSON.stringify(bad)}: ${JSON.stringify(r.body)}`);
    t.is(r.body.error.param, 'expires_at');
  }
  const ok = await gw.admin('POST', `/accounts/${acc.id}/keys`, { name: 'k', expires_at: '2099-01-01T00:00:00Z' });
  t.is(ok.status, 201);
  t.is(ok.body.expires_at, Date.UTC(2099, 0, 1) / 1000);
});
