import { MockActivityEnvironment } from '@temporalio/testing';
import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { simulator: true, worker: true });
});
test.after.always(async () => gw?.close());

test('usage: one row per public call, rejected included; in-flight rows settle into normal rows; CSV columns', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const h = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const post = (path: string, body: unknown) => fetch(`${gw.url}${path}`, { method: 'POST', headers: h, body: JSON.stringify(body) });
  await (await post('/v1/images/generations', { model: 'gpt-image-1', prompt: 'a', n: 2 })).text(); // success
  await (await post('/v1/images/generations', { model: 'nope', prompt: 'a' })).text(); // rejected
  await (await post('/v1/images/generations', { model: 'gpt-image-1', prompt: 'a', n: 99 })).text(); // rejected
  const sum = (await (await fetch(`${gw.url}/api/v1/usage`, { headers: h })).json()) as Record<string, any>;
  t.is(sum.total_requests, 3);
  t.is(sum.by_status.success, 1);
  t.is(sum.by_status.rejected, 2);
  t.is(sum.total_cost_usd, '0.08');
  const ok = sum.data.find((r: any) => r.status === 'success');
  t.is(ok.unit_count, 2);
  t.is(ok.unit_type, 'image');
  t.truthy(ok.task_id);
  t.truthy(ok.submitted_at);
  t.is(ok.result_urls.split('|').length, 2);

  const csv = await fetch(`${gw.url}/api/v1/usage/export`, { headers: h });
  t.is(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.is(csv.headers.get('x-truncated'), null);
  const lines = (await csv.text()).trim().split('\n');
  t.is(lines[0], 'id,created_at,key_name,key_prefix,model,status,error_code,error_message,input_tokens,output_tokens,cached_tokens,unit_count,unit_type,cost_usd,latency_ms,request_id,task_id,submitted_at,attempts_count,result_urls,result_expires_at');
  t.is(lines.length, 4);
});

test('hosted links are marked expired once their lifetime is over (link sweeper activity)', async (t) => {
  const { createMediaActivities } = await import('../../activities/media');
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const r = await fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-image-1', prompt: 'expiring' }),
  });
  t.is(r.status, 200);
  const task = await gw.deps.db.Task.findOne({ account_id: a.id }).lean();
  t.false(task!.result!.links_expired);
  const acts = createMediaActivities(gw.deps);
  t.is(await new MockActivityEnvironment().run(acts.sweepExpiredLinks, { now: Date.now() }), 0);
  const later = task!.result!.expires_at!.getTime() + 1;
  t.true(later - Date.now() > 23 * 3600 * 1000);
  t.true(((await new MockActivityEnvironment().run(acts.sweepExpiredLinks, { now: later })) as number) >= 1);
  t.true((await gw.deps.db.Task.findById(task!._id).lean())!.result!.links_expired);
  // task files older than the 7-day retention go
  await gw.deps.db.TaskFile.create({ _id: 'old/f/0', group: 'old', content_type: 'image/png', data: Buffer.from('x'), created_at: new Date(Date.now() - 8 * 24 * 3600 * 1000) });
  await gw.deps.db.TaskFile.create({ _id: 'new/f/0', group: 'new', content_type: 'image/png', data: Buffer.from('x'), created_at: new Date() });
  await new MockActivityEnvironment().run(acts.sweepExpiredLinks, { now: Date.now() });
  t.is(await gw.deps.db.TaskFile.countDocuments({ _id: 'old/f/0' }), 0);
  t.is(await gw.deps.db.TaskFile.countDocuments({ _id: 'new/f/0' }), 1);
});
