import test from 'ava';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { leanHeaderSetter } from '../../gateway/response-headers';

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
