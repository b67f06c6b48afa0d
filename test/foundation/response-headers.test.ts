import test from 'ava';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import net from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { flattenStoredHead, leanHeaderSetter } from '../../gateway/response-headers';

/** What a handler's `ctx.set` calls leave on the response, with Koa's own setter and with the lean one. */
async function headersOf(lean: boolean, handler: (ctx: Koa.Context) => void): Promise<{ status: number; headers: Record<string, string | string[]> }> {
  const app = new Koa();
  app.silent = true;
  if (lean) leanHeaderSetter(app);
  app.use(async (ctx) => {
    handler(ctx);
    ctx.body = 'ok';
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const headers: Record<string, string | string[]> = {};
    res.headers.forEach((v, k) => (headers[k] = v));
    const cookies = res.headers.getSetCookie();
    if (cookies.length) headers['set-cookie'] = cookies;
    delete headers.date;
    return { status: res.status, headers };
  } finally {
    server.close();
  }
}

const cases: Array<[string, (ctx: Koa.Context) => void]> = [
  ['a string and a number', (ctx) => {
    ctx.set('X-Gateway-Trace', 'req_1');
    ctx.set('X-Count', 3 as never);
  }],
  ['an object of strings and numbers', (ctx) => ctx.set({ 'x-ratelimit-limit-requests': '60', 'x-ratelimit-remaining-requests': 59 as never, 'Retry-After': '2' })],
  ['arrays: several Set-Cookie, a singleton Content-Type unwrapped', (ctx) => {
    ctx.set('Set-Cookie', ['a=1', 'b=2']);
    ctx.set({ 'Content-Type': ['text/plain; charset=utf-8'] as never, Link: ['<a>', '<b>'] as never });
  }],
  ['a value replaced', (ctx) => {
    ctx.set('X-A', 'one');
    ctx.set('x-a', 'two');
  }],
];

for (const [name, handler] of cases) {
  test(`the lean setter leaves what Koa's leaves: ${name}`, async (t) => {
    t.deepEqual(await headersOf(true, handler), await headersOf(false, handler));
  });
}

test('the lean setter refuses what Koa refuses: an undefined value, a singleton header with two values', async (t) => {
  for (const handler of [(ctx: Koa.Context) => ctx.set('X-A', undefined as never), (ctx: Koa.Context) => ctx.set('Content-Length', ['1', '2'])]) {
    const [lean, koa] = [await headersOf(true, handler), await headersOf(false, handler)];
    t.is(lean.status, 500);
    t.is(koa.status, 500);
  }
});

/** Heap bytes a held response takes, its head written with a dozen headers (as a stream's is). */
function heapPerResponse(flatten: boolean): number {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const n = 2_000;
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = Array.from({ length: n }, (_, i) => {
    const res = new http.ServerResponse(new http.IncomingMessage(new net.Socket()));
    for (let h = 0; h < 10; h++) res.setHeader(`x-header-${h}`, `value-${i}-${h}`);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    if (flatten) flattenStoredHead(res);
    return res;
  });
  gc();
  const held = (process.memoryUsage().heapUsed - before) / kept.length;
  return held;
}

test('a stored head is kept as one flat string: a stream holds its 250 bytes, not a rope of some 45 strings', (t) => {
  const rope = heapPerResponse(false);
  const flat = heapPerResponse(true);
  t.log(`heap a response: ${Math.round(rope)} B with its head as built, ${Math.round(flat)} B flattened`);
  t.true(rope - flat > 800, `flattening saves ${Math.round(rope - flat)} B a response`);
  const res = new http.ServerResponse(new http.IncomingMessage(new net.Socket()));
  res.setHeader('x-one', '1');
  res.writeHead(200);
  const head = (res as unknown as { _header: string })._header;
  flattenStoredHead(res);
  t.is((res as unknown as { _header: string })._header, head, 'the head is the same text');
  t.notThrows(() => flattenStoredHead({}), 'a response without a stored head is left alone');
});
