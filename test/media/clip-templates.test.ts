import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';

let gw: TestGateway;
/** Every request the simulator receives, as `METHOD url` (its media routes keep no request log of GETs). */
const seen: string[] = [];
test.before(async () => {
  gw = await startGateway({}, { simulator: true, worker: false });
  gw.sim!.server.prependListener('request', (req) => seen.push(`${req.method} ${req.url}`));
});
test.after.always(async () => gw?.close());

const get = (key: string | null, path: string) => fetch(`${gw.url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
const upstreamCalls = (fragment: string) => seen.filter((l) => l.includes('/dh/v1/clip-templates') && l.includes(fragment)).length;

async function account(fields: Record<string, unknown> = {}) {
  const a = await gw.newAccount();
  return { id: a.id, key: (await gw.newKey(a.id, fields)).key };
}

test.serial('per scene: items with id, title, cover, has_title, has_persona; the second call is served from the cache', async (t) => {
  const a = await account();
  const r = await get(a.key, '/v1/videos/clip-templates?scene=realMan');
  t.is(r.status, 200);
  t.truthy(r.headers.get('x-gateway-trace'));
  const body = (await r.json()) as { scene: string; data: Array<Record<string, any>> };
  t.is(body.scene, 'realMan');
  t.true(body.data.length > 0);
  for (const item of body.data) {
    t.is(item.scene, 'realMan');
    t.is(typeof item.id, 'string');
    t.is(typeof item.title, 'string');
    t.is(typeof item.cover, 'string');
    t.is(typeof item.has_title, 'boolean');
    t.is(typeof item.has_persona, 'boolean');
  }
  t.is(upstreamCalls('scene=realMan'), 1);
  // another account, same scene: no second upstream call
  const b = await account();
  const again = await get(b.key, '/v1/videos/clip-templates?scene=realMan');
  t.is(again.status, 200);
  t.deepEqual(((await again.json()) as any).data, body.data);
  t.is(upstreamCalls('scene=realMan'), 1);
  t.truthy(await gw.deps.redis.get('cliptpl:list:realMan'));
  // free
  t.is(await gw.deps.wallet.balance(a.id), parseCredits('40.44'));
});

test.serial('by id: canvas and layers, cached too', async (t) => {
  const a = await account();
  const list = (await (await get(a.key, '/v1/videos/clip-templates?scene=newsMixCutting')).json()) as { data: Array<{ id: string; has_title: boolean }> };
  const id = list.data[0].id;
  const r = await get(a.key, `/v1/videos/clip-templates/${id}`);
  t.is(r.status, 200);
  const tpl = (await r.json()) as Record<string, any>;
  t.is(tpl.id, id);
  t.is(tpl.has_title, list.data[0].has_title);
  t.is(typeof tpl.canvas.width, 'number');
  t.is(typeof tpl.canvas.height, 'number');
  t.true(Array.isArray(tpl.layers) && tpl.layers.length > 0);
  t.truthy(tpl.layers[0].type);
  t.is(upstreamCalls(`/clip-templates/${id}`), 1);
  t.deepEqual(await (await get(a.key, `/v1/videos/clip-templates/${id}`)).json(), tpl);
  t.is(upstreamCalls(`/clip-templates/${id}`), 1);
});

test('every scene and no scene (all); an unknown scene is 400 invalid_request_error', async (t) => {
  const a = await account();
  const scenes = ['virtualman', 'realMan', 'oralMixCutting', 'newsMixCutting'];
  let total = 0;
  for (const scene of scenes) {
    const body = (await (await get(a.key, `/v1/videos/clip-templates?scene=${scene}`)).json()) as { data: Array<{ scene: string }> };
    t.true(body.data.length > 0);
    t.true(body.data.every((x) => x.scene === scene));
    total += body.data.length;
  }
  const all = (await (await get(a.key, '/v1/videos/clip-templates')).json()) as { data: unknown[] };
  t.is(all.data.length, total);
  const bad = await get(a.key, '/v1/videos/clip-templates?scene=cartoon');
  t.is(bad.status, 400);
  const e = ((await bad.json()) as any).error;
  t.is(e.code, 'invalid_request_error');
  t.is(e.param, 'scene');
});

test('unknown template id is 404', async (t) => {
  const a = await account();
  const r = await get(a.key, '/v1/videos/clip-templates/no-such-template');
  t.is(r.status, 404);
});

test('a key without any clip-* model is refused with 403 model_not_allowed; one clip model is enough', async (t) => {
  const a = await gw.newAccount();
  const noClip = (await gw.newKey(a.id, { allowed_models: ['gpt-image-1', 'dh-avatar'] })).key;
  for (const path of ['/v1/videos/clip-templates?scene=realMan', '/v1/videos/clip-templates/anything']) {
    const r = await get(noClip, path);
    t.is(r.status, 403);
    const e = ((await r.json()) as any).error;
    t.is(e.code, 'model_not_allowed');
  }
  const oneClip = (await gw.newKey(a.id, { allowed_models: ['clip-news'] })).key;
  t.is((await get(oneClip, '/v1/videos/clip-templates?scene=newsMixCutting')).status, 200);
});

test('no key: 401 authentication_error (digital-human dialect)', async (t) => {
  const r = await get(null, '/v1/videos/clip-templates?scene=realMan');
  t.is(r.status, 401);
  t.is(((await r.json()) as any).error.code, 'authentication_error');
});
