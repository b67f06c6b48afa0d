import test from 'ava';
import Router from '@koa/router';
import { startGateway, type TestGateway } from '../helpers/stack';
import { createApp } from '../../gateway/app';
import { indexRoutes, routeHead } from '../../gateway/route-index';

/**
 * The gateway's router matches by literal route heads before regexps
 * (gateway/route-index.ts): over every route of the real app, with
 * parameters filled in, upper-cased, with and without trailing slashes,
 * deeper and unknown paths, and every method, it must return exactly what
 * @koa/router's own match returns.
 */
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway();
});
test.after.always(async () => gw?.close());

function rootRouter(): Router {
  const app = createApp(gw.deps);
  const dispatch = (app.middleware as Array<{ router?: Router }>).find((m) => m.router && m.router.stack.length > 50);
  if (!dispatch?.router) throw new Error('no root router in the app');
  return dispatch.router;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE'];

function pathsOf(router: Router): string[] {
  const out = new Set<string>(['/', '', '/v1', '/v1/', '/V1/KEY/BALANCE', '/v1/key/balance/', '/v1/key/balancex', '/nope', '/v1beta/models/gemini-2.0-flash:generateContent',
    '/v1/models/gemini-2.0-flash:streamGenerateContent', '/console', '/console/x', '/v1/images/generations/task_abc/extra', '//v1/key/balance', '/v1//key/balance']);
  for (const layer of router.stack) {
    if (typeof layer.path !== 'string') continue;
    const filled = layer.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, 'id_1');
    out.add(layer.path);
    out.add(filled);
    out.add(`${filled}/`);
    out.add(filled.toUpperCase());
    out.add(`${filled}/more`);
    out.add(filled.replace(/id_1/g, 'a/b'));
    out.add(filled.slice(0, -1));
  }
  return [...out];
}

const shape = (router: Router, r: ReturnType<Router['match']>) => ({
  path: r.path.map((l) => router.stack.indexOf(l)),
  pathAndMethod: r.pathAndMethod.map((l) => router.stack.indexOf(l)),
  route: r.route,
});

test('the indexed match equals @koa/router\'s over every route of the gateway', (t) => {
  const router = rootRouter();
  t.true(router.stack.length > 50);
  const original = (p: string, m: string) => Router.prototype.match.call(router, p, m);
  let compared = 0;
  let matched = 0;
  for (const p of pathsOf(router)) {
    for (const m of METHODS) {
      const want = shape(router, original(p, m));
      t.deepEqual(shape(router, router.match(p, m)), want, `${m} ${p}`);
      compared++;
      if (want.route) matched++;
    }
  }
  t.true(matched > 100, `${matched} of ${compared} lookups found a route`);
});

test('heads: literal text up to the first parameter, lower-cased, no trailing slash; RegExp routes have none', (t) => {
  t.is(routeHead({ path: '/v1/key/balance' }), '/v1/key/balance');
  t.is(routeHead({ path: '/v1/Images/generations/:id' }), '/v1/images/generations');
  t.is(routeHead({ path: '/v1beta/models/:target' }), '/v1beta/models');
  t.is(routeHead({ path: '/files{/:name}' }), '/files');
  t.is(routeHead({ path: '/' }), '');
  t.is(routeHead({ path: /^\/x/ as unknown as string }), '');
});

test('routes added after indexing, non-ASCII paths, case-sensitive and strict routers match as the original does', (t) => {
  for (const opts of [{}, { sensitive: true }, { strict: true }]) {
    const r = new Router(opts);
    r.get('/a/b', () => undefined);
    r.get('/A/:x', () => undefined);
    r.post('/a/b/', () => undefined);
    r.all('/k', () => undefined);
    const plain = new Router(opts);
    plain.get('/a/b', () => undefined);
    plain.get('/A/:x', () => undefined);
    plain.post('/a/b/', () => undefined);
    plain.all('/k', () => undefined);
    indexRoutes(r);
    r.get('/late/:id', () => undefined);
    plain.get('/late/:id', () => undefined);
    for (const p of ['/a/b', '/A/B', '/a/b/', '/a/x', '/A/x', '/a/ſ', '/K', '/\u212a', '/late/1', '/LATE/1/', '/']) {
      for (const m of ['GET', 'POST', 'HEAD']) t.deepEqual(shape(r, r.match(p, m)), shape(plain, plain.match(p, m)), `${JSON.stringify(opts)} ${m} ${p}`);
    }
  }
});
