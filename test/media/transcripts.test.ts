import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';

const GRANT = parseCredits('40.44');
const PER_REQUEST = parseCredits('0.05');

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { simulator: true, worker: true, mediaDelayMs: 0 });
});
test.after.always(async () => gw?.close());

const extract = (key: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}/v1/transcripts/extract`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

async function account() {
  const a = await gw.newAccount();
  return { id: a.id, key: (await gw.newKey(a.id)).key };
}

const LINK = 'https://v.example.com/share/abc123?dur=20&lang=en';

test('extract: the spoken text of a short-video link, synchronous, charged per request', async (t) => {
  const a = await account();
  const r = await extract(a.key, { url: LINK });
  t.is(r.status, 200, await r.clone().text());
  t.truthy(r.headers.get('x-gateway-trace'));
  const body = (await r.json()) as Record<string, any>;
  t.is(body.object, 'transcript');
  t.is(body.model, 'transcript-extract');
  t.is(body.url, LINK);
  t.is(body.language, 'en');
  t.is(body.duration_seconds, 20);
  t.true(body.text.length > 0);
  t.true(body.segments.length > 0);
  t.is(body.segments.map((s: any) => s.text).join(' ').length > 0, true);
  t.is(await gw.deps.wallet.balance(a.id), GRANT - PER_REQUEST);
  const usage = await gw.deps.db.Usage.findById(body.id).lean();
  t.is(usage?.status, 'success');
  t.is(usage?.unit_type, 'request');
  t.is(usage?.cost_nano, PER_REQUEST);
});

test('language hint passes to the upstream', async (t) => {
  const a = await account();
  const url = 'https://v.example.com/share/zh-clip';
  const body = (await (await extract(a.key, { url, language: 'zh' })).json()) as Record<string, any>;
  t.is(body.language, 'zh');
  t.is(body.duration_seconds, 30);
  const sent = ((await gw.control('GET', '/media/tasks?channel=dh-a')).tasks as Array<{ path: string; body: Record<string, any> }>).find((x) => x.body.url === url)!;
  t.is(sent.path, '/dh/v1/transcripts');
  t.is(sent.body.language, 'zh');
});

test('validation: url public http(s), language code, transcript model; nothing charged', async (t) => {
  const a = await account();
  const cases: Array<[unknown, number, string, string?]> = [
    [{}, 400, 'invalid_request', 'url'],
    [{ url: 'not a link' }, 400, 'invalid_request', 'url'],
    [{ url: 'ftp://v.example.com/a' }, 400, 'invalid_request', 'url'],
    [{ url: 'http://10.0.0.2/a' }, 400, 'invalid_request', 'url'],
    [{ url: LINK, language: 'english' }, 400, 'invalid_request', 'language'],
    [{ url: LINK, model: 'speech-2-5-hd' }, 503, 'no_channel_available'],
    [{ url: LINK, model: 'transcript-9' }, 400, 'model_not_found'],
  ];
  for (const [body, status, code, param] of cases) {
    const r = await extract(a.key, body);
    t.is(r.status, status, JSON.stringify(body));
    const e = ((await r.json()) as any).error;
    t.is(e.code, code);
    if (param) t.is(e.param, param);
  }
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
});

test('a key not allowed the transcript model: 400 model_not_allowed', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id, { allowed_models: ['gpt-image-1'] })).key;
  const r = await extract(key, { url: LINK });
  t.is(r.status, 400);
  t.is(((await r.json()) as any).error.code, 'model_not_allowed');
});

test.serial('no speech in the video: 422, full refund, an error usage row', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'dh-a', fault: { type: 'fail' }, times: 1, match: '/dh/v1/transcripts' });
  const r = await extract(a.key, { url: LINK });
  t.is(r.status, 422);
  const e = ((await r.json()) as any).error;
  t.is(e.code, 'invalid_request');
  t.regex(e.message, /speech/i);
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
  const rows = await gw.deps.db.Usage.find({ account_id: a.id, endpoint: 'transcripts' }).lean();
  t.is(rows.length, 1);
  t.is(rows[0].status, 'error');
  t.is(rows[0].cost_nano, 0);
});

test.serial('extraction timed out upstream: 504, full refund, no other channel tried', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'dh-a', fault: { type: 'expire' }, times: 1, match: '/dh/v1/transcripts' });
  const before = ((await gw.control('GET', '/media/tasks?channel=dh-b')).tasks as unknown[]).length;
  const r = await extract(a.key, { url: LINK });
  t.is(r.status, 504);
  t.is(((await r.json()) as any).error.code, 'upstream_timeout');
  t.is(await gw.deps.wallet.balance(a.id), GRANT);
  t.is(((await gw.control('GET', '/media/tasks?channel=dh-b')).tasks as unknown[]).length, before);
});

test.serial('5xx on the first channel: the next one extracts', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'dh-a', fault: { type: 'submit_status', status: 500 }, times: 1, match: '/dh/v1/transcripts' });
  const r = await extract(a.key, { url: LINK });
  t.is(r.status, 200);
  const id = ((await r.json()) as any).id;
  t.is((await gw.deps.db.Task.findById(id).lean())?.upstream?.channel, 'dh-b');
  t.is(await gw.deps.wallet.balance(a.id), GRANT - PER_REQUEST);
});

test.serial('the call blocks while the vendor extracts', async (t) => {
  const a = await account();
  await gw.control('POST', '/media/faults', { channel: 'dh-a', fault: { type: 'delay', ms: 1500 }, times: 1, match: '/dh/v1/transcripts' });
  const started = Date.now();
  const r = await extract(a.key, { url: LINK });
  t.is(r.status, 200);
  t.true(Date.now() - started >= 1500);
});

test('idempotency: the transcript replays, one charge', async (t) => {
  const a = await account();
  const r1 = await extract(a.key, { url: LINK }, { 'Idempotency-Key': 'tr-1' });
  const r2 = await extract(a.key, { url: LINK }, { 'Idempotency-Key': 'tr-1' });
  t.is(r2.headers.get('idempotency-replayed'), 'true');
  t.is(await r2.text(), await r1.text());
  t.is(await gw.deps.wallet.balance(a.id), GRANT - PER_REQUEST);
});
