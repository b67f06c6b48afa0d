import test from 'ava';
import { GRANT, credits, newestTask, startKit, type Kit } from './images-kit';
import { INLINE_BODY_MAX_BYTES, bodyText, isFileRef, keepBody } from '../../providers/media/images-files';
import type { ProviderCall } from '../../providers/media/types';

/**
 * The sync 90-second rule (here 2 s), the 280 s image task limit (here 3 s)
 * and b64_json answers too large for the idempotency cache (here 1500 bytes).
 */
const KEEPALIVE_MS = 2000;
// Above the 5 s upstream delays of the keep-alive tests: the run limit also bounds the sync channel ladder.
const MAX_RUN_MS = 8000;
const CACHE_LIMIT = 1500;
let kit: Kit;
test.before(async () => {
  kit = await startKit({ IMAGE_SYNC_KEEPALIVE_MS: String(KEEPALIVE_MS), MEDIA_MAX_RUN_MS: String(MAX_RUN_MS), IDEMPOTENCY_MAX_CACHED_BODY_BYTES: String(CACHE_LIMIT) });
});
test.after.always(async () => kit?.gw.close());

const GEN = '/v1/images/generations';
const UNIT = credits('0.04'); // gpt-image-1 and flux-kontext-pro

test.serial('sync success after the threshold: headers at the threshold, keep-alive spaces, then the body; charged', async (t) => {
  const a = await kit.account();
  await kit.fault('openai-images-a', { type: 'delay', ms: 5000 }, 1);
  const started = Date.now();
  const r = await kit.post(a.key, GEN, { model: 'gpt-image-1', prompt: 'slow but fine', n: 2 });
  const headersAfter = Date.now() - started;
  t.is(r.status, 200);
  t.true(headersAfter >= KEEPALIVE_MS && headersAfter < 5000, `headers after ${headersAfter} ms`);
  t.truthy(r.headers.get('x-gateway-trace'));
  const text = await r.text();
  t.true(Date.now() - started >= 5000);
  t.regex(text, /^ +\{/);
  const body = JSON.parse(text) as { data: unknown[] };
  t.is(body.data.length, 2);
  t.is(await kit.balance(a.id), GRANT - 2 * UNIT);
});

test.serial('sync failure after the threshold: 200 with the error body, nothing charged', async (t) => {
  const a = await kit.account();
  await kit.fault('openai-images-a', { type: 'delay', ms: 3000 }, 1);
  for (const ch of ['openai-images-a', 'openai-images-b', 'openai-images-c']) await kit.fault(ch, { type: 'fail' }, 1);
  const r = await kit.post(a.key, GEN, { model: 'gpt-image-1', prompt: 'slow and doomed' });
  t.is(r.status, 200);
  const body = JSON.parse(await r.text()) as { error: { message: string; type: string }; data?: unknown };
  t.is(body.error.type, 'server_error');
  t.is(body.data, undefined);
  t.is(await kit.balance(a.id), GRANT);
  const doc = await newestTask(kit, a.id);
  t.is(doc.state, 'failed');
  t.deepEqual(await kit.ledger(doc._id), { reserve: -UNIT, settle: UNIT });
});

test.serial('sync failure before the threshold keeps its real status', async (t) => {
  const a = await kit.account();
  for (const ch of ['openai-images-a', 'openai-images-b', 'openai-images-c']) await kit.fault(ch, { type: 'fail' }, 1);
  const r = await kit.post(a.key, GEN, { model: 'gpt-image-1', prompt: 'quickly doomed' });
  t.is(r.status, 500);
  t.is(((await r.json()) as any).error.type, 'server_error');
  t.is(await kit.balance(a.id), GRANT);
});

test.serial('an async image task past its run limit ends failed (task_expired), fully refunded', async (t) => {
  const a = await kit.account();
  await kit.fault('image-tasks-a', { type: 'hang' }, 1);
  const r = await kit.post(a.key, GEN, { model: 'flux-kontext-pro', prompt: 'never ends', n: 3, async: true });
  const { id } = (await r.json()) as { id: string };
  const running = await kit.get(a.key, `${GEN}/${id}`);
  t.is(running.status, 202);
  t.deepEqual(Object.keys((await running.json()) as object).sort(), ['created_at', 'id', 'model', 'status']);
  const final = await kit.final(a.key, id);
  t.is(final.status, 504);
  const e = ((await final.json()) as { error: { code: string } }).error;
  t.is(e.code, 'task_expired');
  t.deepEqual(await kit.ledger(id), { reserve: -3 * UNIT, settle: 3 * UNIT });
  t.is(await kit.balance(a.id), GRANT);
  const list = (await (await kit.get(a.key, `${GEN}?status=failed`)).json()) as { data: Array<Record<string, any>> };
  const item = list.data.find((x) => x.id === id)!;
  t.is(item.status, 'failed');
  t.is(item.error_code, 'task_expired');
  t.is(item.cost, '0.00');
  t.is(item.unit_count, 0);
  t.false('result' in item);
});

test.serial('a sync call on a task that expires after the threshold: 200 with the expiry error', async (t) => {
  const a = await kit.account();
  await kit.fault('image-tasks-a', { type: 'hang' }, 1);
  const r = await kit.post(a.key, GEN, { model: 'flux-kontext-pro', prompt: 'sync never ends' });
  t.is(r.status, 200);
  const body = JSON.parse(await r.text()) as { error: { code: string } };
  t.is(body.error.code, 'task_expired');
  t.is(await kit.balance(a.id), GRANT);
});

test('b64_json: answers carry images; too large to keep -> replay is 409 idempotency_response_not_cached', async (t) => {
  const a = await kit.account();
  const body = { model: 'gpt-image-1', prompt: 'b64 many', n: 10, response_format: 'b64_json' };
  const r1 = await kit.post(a.key, GEN, body, { 'Idempotency-Key': 'b64-big' });
  t.is(r1.status, 200);
  const text = (await r1.text()).trim();
  t.true(Buffer.byteLength(text) > CACHE_LIMIT, `${Buffer.byteLength(text)} bytes`);
  const data = (JSON.parse(text) as { data: Array<{ b64_json?: string; url?: string }> }).data;
  t.is(data.length, 10);
  t.true(data.every((d) => d.url === undefined && Buffer.from(d.b64_json!, 'base64').subarray(1, 4).toString('latin1') === 'PNG'));
  const r2 = await kit.post(a.key, GEN, body, { 'Idempotency-Key': 'b64-big' });
  t.is(r2.status, 409);
  const e = ((await r2.json()) as { error: { code: string; type: string } }).error;
  t.is(e.code, 'idempotency_response_not_cached');
  t.is(e.type, 'invalid_request_error');
  t.is(await kit.balance(a.id), GRANT - 10 * UNIT); // charged once
  // a resubmission with a new key is a new, charged request
  const r3 = await kit.post(a.key, GEN, body, { 'Idempotency-Key': 'b64-big-2' });
  t.is(r3.status, 200);
  t.is(await kit.balance(a.id), GRANT - 20 * UNIT);
});

test('url output with the same kind of request is small enough to replay', async (t) => {
  const a = await kit.account();
  const body = { model: 'gpt-image-1', prompt: 'url one' };
  const r1 = await kit.post(a.key, GEN, body, { 'Idempotency-Key': 'url-small' });
  const t1 = await r1.text();
  t.true(Buffer.byteLength(t1) < CACHE_LIMIT);
  const r2 = await kit.post(a.key, GEN, body, { 'Idempotency-Key': 'url-small' });
  t.is(r2.status, 200);
  t.is(r2.headers.get('idempotency-replayed'), 'true');
  // Keep-alive spaces (should the call have crossed the threshold) are padding, not part of the kept answer.
  t.is(await r2.text(), t1.trimStart());
  t.is(await kit.balance(a.id), GRANT - UNIT);
});

test('b64_json in async mode: the poll answer carries the images', async (t) => {
  const a = await kit.account();
  const r = await kit.post(a.key, GEN, { model: 'flux-kontext-pro', prompt: 'b64 async', n: 2, response_format: 'b64_json', async: true });
  const { id } = (await r.json()) as { id: string };
  const final = await kit.final(a.key, id);
  t.is(final.status, 200);
  const data = ((await final.json()) as { data: Array<{ b64_json?: string }> }).data;
  t.is(data.length, 2);
  t.true(data.every((d) => typeof d.b64_json === 'string'));
});

test('answers above 256 KB are stored in task_files, and the poll serves them byte for byte', async (t) => {
  const a = await kit.account();
  const r = await kit.post(a.key, GEN, { model: 'gpt-image-1', prompt: 'to be enlarged', async: true });
  const { id } = (await r.json()) as { id: string };
  t.is((await kit.final(a.key, id)).status, 200);
  const call = { task: { _id: id }, taskFiles: kit.gw.deps.db.TaskFile } as unknown as ProviderCall;
  t.is(await keepBody(call, '{"small":true}'), '{"small":true}');
  const large = JSON.stringify({ created: 1, data: [{ b64_json: 'A'.repeat(INLINE_BODY_MAX_BYTES + 10) }] });
  const ref = await keepBody(call, large);
  t.true(isFileRef(ref));
  t.is(await keepBody(call, large), ref); // a retried activity writes the same file again
  t.is(await bodyText(kit.gw.deps.db.TaskFile, ref), large);
  await kit.gw.deps.db.Task.updateOne({ _id: id }, { $set: { final_body: ref } });
  const polled = await kit.get(a.key, `${GEN}/${id}`);
  t.is(polled.status, 200);
  t.is(await polled.text(), large);
});
