import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { simulator: true, worker: true });
});
test.after.always(async () => gw?.close());

const post = (key: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const get = (key: string, path: string) => fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });

async function account() {
  const a = await gw.newAccount();
  return { id: a.id, key: (await gw.newKey(a.id)).key };
}

async function pollFinal(key: string, id: string): Promise<Response> {
  for (let i = 0; i < 200; i++) {
    const r = await get(key, `/v1/images/generations/${id}`);
    if (r.status !== 202) return r;
    await r.body?.cancel();
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error('task did not finish');
}

test('sync generation: OpenAI-shaped body, charged per image returned', async (t) => {
  const a = await account();
  const r = await post(a.key, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'a red fox', n: 2, size: '1024x1024' });
  t.is(r.status, 200);
  t.truthy(r.headers.get('x-gateway-trace'));
  const body = (await r.json()) as { data: Array<{ url: string }>; created: number; expires_at: number };
  t.is(body.data.length, 2);
  t.true(body.data[0].url.startsWith('http'));
  t.true(body.expires_at > Date.now() / 1000);
  t.is(await gw.deps.wallet.balance(a.id), parseCredits('40.44') - 2 * parseCredits('0.04'));
});

test('async generation: submit, 202 while running, final answer byte-identical to sync', async (t) => {
  const a = await account();
  const r = await post(a.key, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'a blue whale', async: true });
  t.is(r.status, 200);
  const sub = (await r.json()) as { id: string; status: string; model: string; created_at: number };
  t.is(sub.status, 'queued');
  t.is(sub.model, 'gpt-image-1');
  const final = await pollFinal(a.key, sub.id);
  t.is(final.status, 200);
  const text = await final.text();
  const again = await (await get(a.key, `/v1/images/generations/${sub.id}`)).text();
  t.is(again, text);
  t.is(JSON.parse(text).data.length, 1);
  // listed with the 2.2 fields
  const list = (await (await get(a.key, '/v1/images/generations')).json()) as { data: Array<Record<string, any>>; next_cursor: string | null };
  const item = list.data.find((x) => x.id === sub.id)!;
  t.is(item.status, 'succeeded');
  t.is(item.endpoint, 'generations');
  t.is(item.unit_count, 1);
  t.is(item.cost, '0.04');
  t.is(item.result.urls.length, 1);
  t.is(list.next_cursor, null);
});

test.serial('upstream 4xx passes through with its status and body, not charged', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'openai-images-a', fault: { type: 'submit_status', status: 400, body: { error: { code: 'bad_size', message: 'size too small', param: 'size', type: 'invalid_request_error' } } }, times: 1 });
  const r = await post(a.key, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'x' });
  t.is(r.status, 400);
  const body = (await r.json()) as { error: { code: string; message: string } };
  t.is(body.error.code, 'bad_size');
  t.is(await gw.deps.wallet.balance(a.id), parseCredits('40.44'));
});

test('n above 10 is 400 invalid_request; unknown model 400 model_not_found', async (t) => {
  const a = await account();
  const r = await post(a.key, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'x', n: 11 });
  t.is(r.status, 400);
  t.is(((await r.json()) as any).error.code, 'invalid_request');
  const m = await post(a.key, '/v1/images/generations', { model: 'nope', prompt: 'x' });
  t.is(m.status, 400);
  t.is(((await m.json()) as any).error.code, 'model_not_found');
});

test('reference images are public https URLs or data: URIs: a plain http URL is 400 invalid_request on generations and edits (spec 2 section 4.2)', async (t) => {
  const a = await account();
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['/v1/images/generations', { image: 'http://example.com/cat.png' }, 'image'],
    ['/v1/images/generations', { image: ['https://example.com/a.png', 'http://example.com/b.png'] }, 'image'],
    ['/v1/images/generations', { image_urls: ['http://example.com/cat.png'] }, 'image_urls'],
    ['/v1/images/edits', { image: 'http://example.com/cat.png' }, 'image'],
  ];
  for (const [path, refs, param] of cases) {
    const r = await post(a.key, path, { model: 'gpt-image-1', prompt: 'refs', ...refs });
    const body = (await r.json()) as any;
    t.is(r.status, 400, `${path} ${JSON.stringify(refs)}: ${JSON.stringify(body)}`);
    t.is(body.error.code, 'invalid_request');
    t.is(String(body.error.param).split('.')[0], param);
  }
  const ok = await post(a.key, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'https ref', image: 'https://example.com/cat.png', image_urls: ['data:image/png;base64,iVBORw0KGgo='] });
  t.is(ok.status, 200, await ok.clone().text());
});

test('idempotency: same key and body replays the first answer with Idempotency-Replayed', async (t) => {
  const a = await account();
  const body = { model: 'gpt-image-1', prompt: 'replay me', async: true };
  const r1 = await post(a.key, '/v1/images/generations', body, { 'Idempotency-Key': 'k-1' });
  const t1 = await r1.text();
  const r2 = await post(a.key, '/v1/images/generations', body, { 'Idempotency-Key': 'k-1' });
  t.is(r2.status, 200, await r2.clone().text());
  t.is(r2.headers.get('idempotency-replayed'), 'true');
  t.is(await r2.text(), t1);
  const r3 = await post(a.key, '/v1/images/generations', { ...body, prompt: 'other' }, { 'Idempotency-Key': 'k-1' });
  t.is(r3.status, 409);
  t.is(((await r3.json()) as any).error.code, 'idempotency_key_reuse');
  const bad = await post(a.key, '/v1/images/generations', body, { 'Idempotency-Key': 'é' });
  t.is(bad.status, 400);
  t.is(((await bad.json()) as any).error.code, 'invalid_idempotency_key');
});
