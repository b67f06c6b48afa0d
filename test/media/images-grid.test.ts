import test from 'ava';
import { GRANT, PNG_URI, credits, newestTask, startKit, type Kit } from './images-kit';
import { imaginePrompt, nearestAspectRatio } from '../../providers/media/midjourney';

/** Fixed-grid images (midjourney-v7 at 0.035 per image, Midjourney-proxy channels mj-a/b/c): spec 2 section 4.2. */
let kit: Kit;
test.before(async () => {
  kit = await startKit();
});
test.after.always(async () => kit?.gw.close());

const GEN = '/v1/images/generations';
const UNIT = credits('0.035');

/** The imagine submission the proxy received for this gateway task (the proxy's `state` carries the task id). */
async function imagineOf(taskId: string) {
  const all = [...(await kit.upstream('mj-a')), ...(await kit.upstream('mj-b')), ...(await kit.upstream('mj-c'))];
  return all.filter((s) => s.path === '/mj/submit/imagine' && s.body.state === taskId);
}

test('size picks the nearest of 1:1, 16:9, 9:16, 4:3, 3:4', (t) => {
  const cases: Array<[string, string]> = [
    ['1024x1024', '1:1'], ['1920x1080', '16:9'], ['1080x1920', '9:16'], ['1600x1200', '4:3'], ['1200x1600', '3:4'],
    ['2048x1024', '16:9'], ['1024x2048', '9:16'], ['1100x1000', '1:1'], ['1300x1000', '4:3'], ['1000x1300', '3:4'], ['3000x1000', '16:9'],
  ];
  for (const [size, ar] of cases) t.is(nearestAspectRatio(size), ar, size);
  t.is(nearestAspectRatio('auto'), null);
});

test('prompt: --ar appended, tier flags --sd/--hd stay last, a prompt\'s own --ar wins, URL references lead', (t) => {
  t.is(imaginePrompt('a cat --hd', { size: '1920x1080' }), 'a cat --ar 16:9 --hd');
  t.is(imaginePrompt('a cat --sd on a mat', { size: '1080x1920' }), 'a cat on a mat --ar 9:16 --sd');
  t.is(imaginePrompt('a cat --ar 2:3 --hd', { size: '1920x1080' }), 'a cat --ar 2:3 --hd');
  t.is(imaginePrompt('a cat', {}), 'a cat');
  t.is(imaginePrompt('a cat --hd', { size: '1024x1024', imageUrls: ['https://x/a.png'] }), 'https://x/a.png a cat --ar 1:1 --hd');
});

test('sync n=1: four images, reserved and charged unit x 4, OpenAI Images body, prompt as the proxy needs it', async (t) => {
  const a = await kit.account();
  const r = await kit.post(a.key, GEN, { model: 'midjourney-v7', prompt: 'a lighthouse at dusk --hd', n: 1, size: '1920x1080' });
  t.is(r.status, 200);
  const body = (await r.json()) as Record<string, any>;
  t.is(body.model, 'midjourney-v7');
  t.is(body.data.length, 4);
  t.true(body.data.every((d: { url: string }) => /^http:\/\/.+\/files\/mj\//.test(d.url)));
  t.is(body.usage.generated_images, 4);
  t.true(body.expires_at > Date.now() / 1000);
  t.true(Number.isInteger(body.created));
  const doc = await newestTask(kit, a.id);
  t.deepEqual(await kit.ledger(doc._id), { reserve: -4 * UNIT, settle: 0 });
  t.is(await kit.balance(a.id), GRANT - 4 * UNIT);
  const [sub] = await imagineOf(doc._id);
  t.is(sub.body.prompt, 'a lighthouse at dusk --ar 16:9 --hd');
  t.is(sub.body.botType, 'MID_JOURNEY');
  t.deepEqual(sub.body.base64Array, []);
});

test('n above 4 reserves unit x n and settles on the 4 produced', async (t) => {
  const a = await kit.account();
  const r = await kit.post(a.key, GEN, { model: 'midjourney-v7', prompt: 'six please', n: 6 });
  t.is(r.status, 200);
  t.is(((await r.json()) as any).data.length, 4);
  const doc = await newestTask(kit, a.id);
  t.deepEqual(await kit.ledger(doc._id), { reserve: -6 * UNIT, settle: 2 * UNIT });
  t.is(await kit.balance(a.id), GRANT - 4 * UNIT);
  t.is((await imagineOf(doc._id))[0].body.prompt, 'six please');
});

test.serial('fewer outputs: 2 of 4 -> charged 2, the surplus refunded; async poll and list agree', async (t) => {
  const a = await kit.account();
  await kit.fault('mj-a', { type: 'fewer_outputs', count: 2 }, 1);
  const r = await kit.post(a.key, GEN, { model: 'midjourney-v7', prompt: 'two only', n: 1, async: true });
  t.is(r.status, 200);
  const sub = (await r.json()) as { id: string; status: string };
  t.is(sub.status, 'queued');
  const final = await kit.final(a.key, sub.id);
  t.is(final.status, 200);
  t.is(((await final.json()) as any).data.length, 2);
  t.deepEqual(await kit.ledger(sub.id), { reserve: -4 * UNIT, settle: 2 * UNIT });
  t.is(await kit.balance(a.id), GRANT - 2 * UNIT);
  const list = (await (await kit.get(a.key, GEN)).json()) as { data: Array<Record<string, any>> };
  const item = list.data.find((x) => x.id === sub.id)!;
  t.is(item.unit_count, 2);
  t.is(item.cost, '0.07');
  t.is(item.result.urls.length, 2);
});

test.serial('upstream FAILURE: the task fails with an OpenAI-shaped error, fully refunded', async (t) => {
  const a = await kit.account();
  await kit.fault('mj-a', { type: 'fail' }, 1);
  const r = await kit.post(a.key, GEN, { model: 'midjourney-v7', prompt: 'doomed' });
  t.is(r.status, 500);
  const body = (await r.json()) as { error: { code: string; message: string; type: string } };
  t.is(body.error.code, 'generation_failed');
  t.regex(body.error.message, /simulated failure/);
  const doc = await newestTask(kit, a.id);
  t.deepEqual(await kit.ledger(doc._id), { reserve: -4 * UNIT, settle: 4 * UNIT });
  t.is(await kit.balance(a.id), GRANT);
});

test.serial('proxy refusal at submit (4xx) passes through in the OpenAI shape, not charged, no other channel tried', async (t) => {
  const a = await kit.account();
  const others = async () => (await kit.upstream('mj-b')).length + (await kit.upstream('mj-c')).length;
  const before = await others(); // serial tests run alone: nothing else submits meanwhile
  await kit.fault('mj-a', { type: 'submit_status', status: 400, body: { code: 4, description: 'banned prompt', result: null } }, 1);
  const r = await kit.post(a.key, GEN, { model: 'midjourney-v7', prompt: 'something banned' });
  t.is(r.status, 400);
  const body = (await r.json()) as { error: { code: string; message: string; type: string; param: null } };
  t.deepEqual(body, { error: { code: 'invalid_request', message: 'banned prompt', param: null, type: 'invalid_request_error' } });
  t.is(await kit.balance(a.id), GRANT);
  t.is((await newestTask(kit, a.id)).state, 'failed');
  t.is(await others(), before);
});

test.serial('proxy 5xx at submit: the next channel takes it', async (t) => {
  const a = await kit.account();
  await kit.fault('mj-a', { type: 'submit_status', status: 500 }, 1);
  const r = await kit.post(a.key, GEN, { model: 'midjourney-v7', prompt: 'second channel' });
  t.is(r.status, 200);
  const doc = await newestTask(kit, a.id);
  t.is(doc.upstream?.channel, 'mj-b');
  t.is(await kit.balance(a.id), GRANT - 4 * UNIT);
});

test('insufficient balance for unit x max(n, 4): 402 at submission, no task written', async (t) => {
  const a = await kit.account();
  await kit.drain(a.id, '0.1'); // covers 2 images, not the grid of 4
  const r = await kit.post(a.key, GEN, { model: 'midjourney-v7', prompt: 'too poor', n: 1, async: true, image: PNG_URI });
  t.is(r.status, 402);
  // the inline reference stored before the reservation was refused is gone again
  t.is(await kit.gw.deps.db.TaskFile.countDocuments({ group: r.headers.get('x-gateway-trace') }), 0);
  t.is(((await r.json()) as any).error.code, 'quota_exceeded');
  t.is((await kit.tasksOf(a.id)).length, 0);
  t.is(await kit.balance(a.id), credits('0.1'));
});

test('references: data URIs go in base64Array, URLs lead the prompt; b64_json answers carry the images', async (t) => {
  const a = await kit.account();
  const r = await kit.post(a.key, GEN, {
    model: 'midjourney-v7', prompt: 'mix these --sd', size: '1200x1600', response_format: 'b64_json',
    image: 'https://example.com/a.png', image_urls: [PNG_URI],
  });
  t.is(r.status, 200);
  const body = (await r.json()) as { data: Array<{ b64_json?: string; url?: string }>; expires_at?: number };
  t.is(body.data.length, 4);
  for (const d of body.data) {
    t.is(d.url, undefined);
    t.is(Buffer.from(d.b64_json!, 'base64').subarray(1, 4).toString('latin1'), 'PNG');
  }
  t.is(body.expires_at, undefined);
  const doc = await newestTask(kit, a.id);
  const [sub] = await imagineOf(doc._id);
  t.is(sub.body.prompt, 'https://example.com/a.png mix these --ar 3:4 --sd');
  t.deepEqual(sub.body.base64Array, [PNG_URI]);
  // 4 images at 0.035; the grid model has no per-reference charge
  t.is(await kit.balance(a.id), GRANT - 4 * UNIT);
});
