import test from 'ava';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import type { TestGateway } from '../helpers/stack';
import { createApp } from '../../gateway/app';
import { createLogger } from '../../platform/logger';
import { send, world } from './kit';

// Logs are pino JSON lines; no API key plaintext reaches a line, whichever way it was sent or logged.

const capture = () => {
  const text: string[] = [];
  const sink = new Writable({ write(chunk, _e, cb) { text.push(String(chunk)); cb(); } });
  return { sink, all: () => text.join('') };
};

const SECRET = `sk-mgateway-${'ab12'.repeat(16)}`;

test('the logger censors key headers, ?key= and key-shaped strings in every field and message', (t) => {
  const { sink, all } = capture();
  const log = createLogger('debug', { service: 't' }, sink);
  log.info('request', {
    authorization: `Bearer ${SECRET}`, 'x-api-key': SECRET, 'x-goog-api-key': SECRET,
    headers: { authorization: `Bearer ${SECRET}`, 'x-api-key': SECRET, 'x-goog-api-key': SECRET, host: 'gw' },
    req: { headers: { authorization: `Bearer ${SECRET}` }, url: `/v1beta/models/g:generateContent?alt=sse&key=${SECRET}` },
    url: `/v1beta/models/g:generateContent?key=${SECRET}`,
  });
  log.warn(`failed for ?key=${SECRET}`, { err: new Error(`upstream said: bad key ${SECRET}`) });
  log.child({ trace: 'req_1' }).error('nested', { deep: { list: [{ note: `Authorization: Bearer ${SECRET}` }] } });
  // Whole fields named like a key-carrying header are censored whatever their value looks like, case and depth aside.
  log.info('upstream', { req: { headers: { Authorization: 'Basic c2VjcmV0LXBhc3N3b3Jk', Cookie: 'session=s3cr3t-cookie', 'Proxy-Authorization': 'Basic cHJveHk6cHc=' } } });
  const out = all();
  const lines = out.trim().split('\n').map((l) => JSON.parse(l));
  t.is(lines.length, 4);
  for (const secret of ['c2VjcmV0LXBhc3N3b3Jk', 's3cr3t-cookie', 'cHJveHk6cHc=']) t.false(out.includes(secret), out);
  t.is(lines[3].req.headers.Authorization, '[redacted]');
  t.false(out.includes(SECRET.slice(12)), out);
  t.false(out.includes('ab12ab12'), out);
  t.is(lines[0].headers.host, 'gw');
  t.is(lines[0].level, 'info');
  t.is(lines[0].msg, 'request');
  t.is(lines[2].trace, 'req_1');
});

let gw: TestGateway;
let key: string;
let url: string;
let server: Server;
const out = capture();
test.before(async () => {
  ({ gw, key } = await world());
  server = createApp({ ...gw.deps, log: createLogger('debug', {}, out.sink) }).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
test.after.always(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await gw?.close();
});

test('requests carrying keys in every accepted place leave no key in the gateway log', async (t) => {
  const body = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
  const wrong = `sk-mgateway-${'9'.repeat(64)}`;
  for (const k of [key, wrong]) {
    await send(url, 'POST', `/v1beta/models/gemini-2.5-pro:generateContent?key=${k}`, { body });
    await send(url, 'POST', '/v1beta/models/gemini-2.5-pro:generateContent', { body, headers: { 'x-goog-api-key': k } });
    await send(url, 'GET', '/v1/key/balance', { headers: { 'x-api-key': k } });
    await send(url, 'GET', '/v1/key/balance', { headers: { authorization: `Bearer ${k}` } });
    await send(url, 'PUT', `/v1/key/balance?key=${k}`);
    await send(url, 'GET', `/v1/nothing?key=${k}`);
  }
  await new Promise((r) => setTimeout(r, 50));
  const text = out.all();
  t.true(text.split('\n').filter(Boolean).length >= 12, text);
  for (const k of [key, wrong]) t.false(text.includes(k.slice(12)), 'a key reached the log');
});

test('the access line: one per request at info, none and nothing scheduled for it below (LOG_LEVEL=warn)', async (t) => {
  const { trace } = await import('../../gateway/middleware/trace');
  const Koa = (await import('koa')).default;
  for (const level of ['info', 'warn'] as const) {
    const { sink, all } = capture();
    const log = createLogger(level, {}, sink);
    const app = new Koa();
    app.use(trace(log));
    app.use((ctx) => {
      ctx.body = 'ok';
    });
    const server = app.listen(0);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/access-line-probe`;
    const realImmediate = global.setImmediate;
    let scheduled = 0;
    global.setImmediate = ((fn: (...a: unknown[]) => void, ...args: unknown[]) => {
      // Only this test's server's lines: the file's other test runs requests meanwhile.
      if (fn.name === 'writeAccessLine' && (args[1] as { path?: string }).path === '/access-line-probe') scheduled++;
      return realImmediate(fn, ...args);
    }) as typeof setImmediate;
    try {
      for (let i = 0; i < 3; i++) t.is((await fetch(url)).status, 200);
      await new Promise((r) => realImmediate(r));
    } finally {
      global.setImmediate = realImmediate;
      server.close();
    }
    const lines = all().split('\n').filter((l) => l.includes('"msg":"request"'));
    t.is(lines.length, level === 'info' ? 3 : 0, level);
    t.is(scheduled, level === 'info' ? 3 : 0, `${level}: access lines scheduled`);
  }
});
